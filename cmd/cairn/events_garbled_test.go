package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: cairn events skipped a line of the history that is not an
// event without a word (20 events printed from 21 lines). It says so, a
// warning naming the file and the line: on stderr, or with --json as a
// warning line in its place, with --run too; a last line cut short, as a
// crash leaves it, is dropped quietly.
func TestEventsWarnOfALineThatIsNotAnEvent(t *testing.T) {
	store := t.TempDir()
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "ev", "-f", crashAgent(t)); code != exitDone {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	_, live, _ := cairn(t, "events", "--json", "--store", store, "ev")
	file := filepath.Join(store, "agents", "ev", "events.jsonl")
	data, err := os.ReadFile(file)
	must(t, err)
	torn := append(bytes.Clone(data), `{"type":"tool_st`...)
	must(t, os.WriteFile(file, torn, 0o600))
	if code, out, errOut := cairn(t, "events", "--json", "--store", store, "ev"); code != exitDone || out != live || errOut != "" {
		t.Fatalf("events with a torn last line: exit %d, stderr %q, the same lines %v; want every whole line and no word", code, errOut, out == live)
	}

	lines := strings.SplitAfter(live, "\n")
	must(t, os.WriteFile(file, []byte(strings.Join(lines[:3], "")+"not json\n"+strings.Join(lines[3:], "")), 0o600))
	warning := file + ", line 4, is not an event and is left out: invalid character"
	code, out, errOut := cairn(t, "events", "--store", store, "ev")
	if code != exitDone || !strings.Contains(errOut, "cairn: warning: "+warning) || !strings.Contains(out, "done after") {
		t.Fatalf("events: exit %d, stderr %q; want a warning saying %q\n%s", code, errOut, warning, out)
	}
	code, out, errOut = cairn(t, "events", "--json", "--store", store, "ev")
	got := strings.SplitAfter(out, "\n")
	if code != exitDone || errOut != "" || len(got) != len(lines)+1 || !strings.Contains(got[3], `"type":"warning"`) ||
		!strings.Contains(got[3], warning) || strings.Join(got[:3], "")+strings.Join(got[4:], "") != live {
		t.Fatalf("events --json: exit %d, stderr %q; want the warning as line 4 and the other lines as they are:\n%s", code, errOut, out)
	}
	run := live[strings.Index(live, `"run":"`)+7:]
	run = run[:strings.Index(run, `"`)]
	if code, one, errOut := cairn(t, "events", "--json", "--run", run, "--store", store, "ev"); one != out {
		t.Fatalf("events --run %s: exit %d, stderr %q; it left out the warning, or more:\n%s", run, code, errOut, one)
	}
}
