package checkpoint

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// A compaction record is kept by the journal and by the snapshot it is
// compacted into; the messages it cuts stay in the state, and what the
// summary cost is counted.
func TestCompactionSurvivesReopen(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			log := newAgent(t, s, "a1", 3)
			c := Compaction{Round: 4, From: 3, Pinned: 0, Policy: "summarize", Summary: "read a three times", Before: 90, After: 30}
			must(t, log.Append(Record{Type: RecCompaction, Time: t0, Compaction: &c, Usage: &conversation.Usage{InputTokens: 50, OutputTokens: 5}}))
			commitRound(t, log, 4)
			must(t, log.Close())
			rec, err := s.Read("a1")
			must(t, err)
			st := rec.State
			if !reflect.DeepEqual(st.Compactions, []Compaction{c}) || st.ContextFrom() != 3 || len(st.Messages) != 9 {
				t.Fatalf("state after reopen: compactions %+v, from %d, %d messages", st.Compactions, st.ContextFrom(), len(st.Messages))
			}
			if st.Usage.InputTokens != 4*10+50 {
				t.Errorf("input tokens %d: want the summary's 50 counted beside the turns' 40", st.Usage.InputTokens)
			}
			clone, err := st.Clone()
			must(t, err)
			if !reflect.DeepEqual(clone.Compactions, st.Compactions) {
				t.Errorf("a snapshot of the state loses its compactions: %+v", clone.Compactions)
			}
		})
	}
}

// A cut that goes backwards or past the conversation is refused as the
// journal is read, not applied.
func TestCompactionOutOfRangeIsRefused(t *testing.T) {
	for _, c := range []Compaction{
		{Round: 4, From: 99, Pinned: -1, Policy: "drop"},
		{Round: 4, From: 2, Pinned: 2, Policy: "drop"},
		{Round: 4, From: 2, Pinned: -5, Policy: "drop"},
	} {
		st := &State{Messages: make([]conversation.Message, 7)}
		r := &replay{st: st}
		err := r.add(Record{Type: RecCompaction, Compaction: &c})
		if err == nil || !strings.Contains(err.Error(), "does not fit") || len(st.Compactions) != 0 {
			t.Errorf("cut %+v: err %v, compactions %d", c, err, len(st.Compactions))
		}
	}
	if _, err := decodeRecord(RecCompaction, []byte{0xa0}); err == nil || !strings.Contains(err.Error(), "without compaction") {
		t.Errorf("a compaction record without its cut: %v", err)
	}
}

// Whatever bytes a journal holds, a state read from it has cuts that fit
// its conversation.
func FuzzCompactionJournal(f *testing.F) {
	dir := f.TempDir()
	s, _ := OpenFileStore(dir)
	log := newAgent(f, s, "seed", 2)
	c := Compaction{Round: 3, From: 3, Pinned: 0, Policy: "summarize", Summary: "two reads"}
	log.Append(Record{Type: RecCompaction, Time: t0, Compaction: &c})
	commitRound(f, log, 3)
	log.Close()
	path := filepath.Join(dir, "agents", "seed", journalName(0))
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(seed[:len(seed)*2/3])
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := s.Read("seed")
		if err != nil {
			return
		}
		from := 0
		for _, c := range rec.State.Compactions {
			if c.From < from || c.From > len(rec.State.Messages) || c.Pinned >= c.From || c.Pinned < -1 {
				t.Fatalf("cut %+v in a state of %d messages", c, len(rec.State.Messages))
			}
			from = c.From
		}
	})
}
