package host

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// A round writes its journal in as few writes as its promises allow: the
// model's turn with its calls' executing records, before any call starts;
// the finished call's result alone, as it is settled; the round's files
// with its commit. A final answer's turn goes with its commit. In the
// history, model_turn goes with the first tool_start.
func TestRoundWritesItsRecordsTogether(t *testing.T) {
	af := writerFile(t, `
turns:
  - tool_calls: [{name: read_file, input: {path: a.txt}}]
  - text: done
`)
	if err := os.WriteFile(filepath.Join(af.Dir, "workspace", "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, store := watchedEngine(t, t.TempDir(), nil)
	started := false
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventToolStart {
			started = store.isAppended(func(r checkpoint.Record) bool { return r.Type == checkpoint.RecTurn && r.Round == 1 })
		}
	}})
	if err != nil || res.Status != StatusDone || res.Rounds != 2 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if !started {
		t.Fatal("the call started before its turn was in the journal")
	}
	var got [][]checkpoint.RecordType
	for _, w := range store.writes {
		var types []checkpoint.RecordType
		for _, r := range w {
			types = append(types, r.Type)
		}
		got = append(got, types)
	}
	want := [][]checkpoint.RecordType{
		{checkpoint.RecRunStarted, checkpoint.RecUser}, // a run never without its prompt
		{checkpoint.RecTurn, checkpoint.RecPhase},
		{checkpoint.RecResult},
		{checkpoint.RecFiles, checkpoint.RecCommit},
		{checkpoint.RecTurn, checkpoint.RecCommit},
		{checkpoint.RecRunEnded},
	}
	if !equalTypes(got, want) {
		t.Fatalf("the journal's writes:\n got %v\nwant %v", got, want)
	}
	together := false
	for _, w := range store.history {
		together = together || bytes.Contains(w, []byte(`"type":"model_turn"`)) && bytes.Contains(w, []byte(`"type":"tool_start"`))
	}
	if !together {
		t.Fatal("model_turn and tool_start went to the history in writes of their own")
	}
}

func equalTypes(a, b [][]checkpoint.RecordType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// A held record is written by the next Append, Sync or Commit, before
// their own records, and by Close: a run that ends right after the model's
// turn leaves it in the journal.
func TestHeldRecordsGoWithTheNextWrite(t *testing.T) {
	turn := checkpoint.Record{Type: checkpoint.RecTurn, Round: 1}
	phase := checkpoint.Record{Type: checkpoint.RecPhase, Round: 1}
	commit := checkpoint.Record{Type: checkpoint.RecCommit, Round: 1}
	for name, tc := range map[string]struct {
		do   func(l *heldLog) error
		want [][]checkpoint.RecordType
	}{
		"append": {func(l *heldLog) error { return l.Append(phase) },
			[][]checkpoint.RecordType{{checkpoint.RecTurn, checkpoint.RecPhase}}},
		"commit": {func(l *heldLog) error { _, err := l.Commit(commit); return err },
			[][]checkpoint.RecordType{{checkpoint.RecTurn, checkpoint.RecCommit}}},
		"sync": {func(l *heldLog) error { return l.Sync() },
			[][]checkpoint.RecordType{{checkpoint.RecTurn}, {}}},
		"close": {func(l *heldLog) error { return l.Close() },
			[][]checkpoint.RecordType{{checkpoint.RecTurn}}},
	} {
		t.Run(name, func(t *testing.T) {
			rec := &recordingLog{}
			l := &heldLog{Log: rec}
			l.hold(turn)
			if len(rec.writes) != 0 {
				t.Fatal("a held record was written at once")
			}
			if err := tc.do(l); err != nil {
				t.Fatal(err)
			}
			if !equalTypes(rec.writes, tc.want) {
				t.Fatalf("writes %v, want %v", rec.writes, tc.want)
			}
			if err := l.Append(phase); err != nil || len(rec.writes[len(rec.writes)-1]) != 1 {
				t.Fatalf("a record was held twice: %v, %v", rec.writes, err)
			}
		})
	}
}

// recordingLog keeps the record types of each Append and Commit; a Sync
// is an empty write.
type recordingLog struct {
	checkpoint.Log
	writes [][]checkpoint.RecordType
}

func (l *recordingLog) write(recs []checkpoint.Record) {
	types := []checkpoint.RecordType{}
	for _, r := range recs {
		types = append(types, r.Type)
	}
	l.writes = append(l.writes, types)
}

func (l *recordingLog) Append(recs ...checkpoint.Record) error { l.write(recs); return nil }

func (l *recordingLog) Commit(recs ...checkpoint.Record) (int64, error) {
	l.write(recs)
	return 0, nil
}

func (l *recordingLog) Sync() error  { l.write(nil); return nil }
func (l *recordingLog) Close() error { return nil }
