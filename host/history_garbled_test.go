package host

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// garbledHistory runs an agent in a file store and returns the store and
// its history's file and lines.
func garbledHistory(t *testing.T) (checkpoint.Store, string, [][]byte) {
	t.Helper()
	eng, store := fileEngine(t)
	af := agentIn(t, "name: g\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns:\n  - text: done\n")
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "g", Prompt: "go"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", "g", "events.jsonl")
	data, err := os.ReadFile(file)
	must(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < 3 {
		t.Fatalf("a history of %d lines; the test needs 3", len(lines))
	}
	return store, file, lines
}

// played is what ReadHistory gives: each event and its line.
type played struct {
	e    Event
	line []byte
}

func playAll(t *testing.T, store checkpoint.Store, id string) []played {
	t.Helper()
	var out []played
	must(t, ReadHistory(t.Context(), store, id, false, func(e Event, line []byte) error {
		out = append(out, played{e, bytes.Clone(line)})
		return nil
	}))
	return out
}

// Regression: a line of the history that is not an event was skipped
// without a word, and a playback of 21 lines gave 20 events. It is given,
// in its place, as a warning that names the file and the line, and says
// why; the lines around it are given as they are. A last line cut short,
// as a crash while it is written leaves it, is still dropped quietly.
func TestHistoryWarnsOfALineThatIsNotAnEvent(t *testing.T) {
	store, file, lines := garbledHistory(t)
	var garbled []byte
	for i, l := range lines {
		if i == 2 {
			garbled = append(garbled, "{\"type\":\"tool_end\",garbage\n"...)
		}
		garbled = append(garbled, l...)
	}
	garbled = append(garbled, `{"type":"run_start","ti`...) // torn: no newline
	must(t, os.WriteFile(file, garbled, 0o600))

	got := playAll(t, store, "g")
	want := append(append(append([][]byte(nil), lines[:2]...), nil), lines[2:]...) // nil: the warning
	if len(got) != len(want) {
		t.Fatalf("%d events from a history of %d whole lines", len(got), len(want))
	}
	for i, p := range got {
		switch {
		case i == 2:
			want := file + ", line 3, is not an event and is left out: invalid character"
			if !p.e.Skipped() || p.e.Agent != "g" || !strings.HasPrefix(p.e.Text, want) || !p.e.Time.Equal(got[1].e.Time) {
				t.Fatalf("in the garbled line's place: %+v; want a warning saying %q, of the time of the event before", p.e, want)
			}
			var back Event
			if err := json.Unmarshal(p.line, &back); err != nil || back.Text != p.e.Text || back.Type != EventWarning {
				t.Fatalf("the warning's line %s is not its event: %v", p.line, err)
			}
		case p.e.Skipped():
			t.Fatalf("event %d: a warning %q; only line 3 is not an event, and the torn last line is dropped quietly", i+1, p.e.Text)
		case !bytes.Equal(append(p.line, '\n'), want[i]):
			t.Fatalf("event %d: line %s, want %s", i+1, p.line, want[i])
		}
	}
}

// A history whose only damage is a last line cut short plays back every
// whole line, with no warning.
func TestHistoryDropsATornLastLineQuietly(t *testing.T) {
	store, file, lines := garbledHistory(t)
	torn := append(bytes.Join(lines, nil), lines[0][:len(lines[0])/2]...)
	must(t, os.WriteFile(file, torn, 0o600))
	got := playAll(t, store, "g")
	if len(got) != len(lines) {
		t.Fatalf("%d events from %d whole lines and a torn one", len(got), len(lines))
	}
	for _, p := range got {
		if p.e.Skipped() {
			t.Fatalf("a warning for a torn last line: %s", p.e.Text)
		}
	}
}

// Regression: a run after a crash that cut the history's last line short
// glued its run_start to that line, and the playback lost both. The next
// run's events are all played back, and the line cut short, no longer
// the last, is reported in its place.
func TestHistoryKeepsTheRunAfterATornLine(t *testing.T) {
	store, file, lines := garbledHistory(t)
	must(t, os.WriteFile(file, append(bytes.Join(lines, nil), `{"type":"tool_st`...), 0o600))
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	must(t, err)
	defer eng.Close(context.Background())
	af := agentIn(t, "name: g\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns:\n  - text: again\n")
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "g", Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	got := playAll(t, store, "g")
	if len(got) < len(lines)+2 || !got[len(lines)].e.Skipped() || got[len(lines)+1].e.Type != EventRunStart {
		t.Fatalf("after the first run's %d lines: %+v, %+v; want the warning for the line cut short, then the next run's start",
			len(lines), got[min(len(lines), len(got)-1)].e, got[min(len(lines)+1, len(got)-1)].e)
	}
}
