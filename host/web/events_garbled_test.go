package web

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: the events route skipped a line of the history that is not
// an event without a word, serving 20 lines of a history of 21. It serves
// a warning in its place, naming the file and the line, in both forms,
// and the stream's ids stay the lines' numbers; a last line cut short, as
// a crash leaves it, is dropped quietly.
func TestEventsRouteWarnsOfALineThatIsNotAnEvent(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("g", approvalAgent, approvalScript)
	file := filepath.Join(f.store.(*checkpoint.FileStore).Dir(), "agents", "g", "events.jsonl")
	history := f.history("g")
	lines := bytes.SplitAfter(history, []byte("\n"))
	lines = lines[:len(lines)-1]

	must(t, os.WriteFile(file, append(bytes.Clone(history), `{"type":"tool_`...), 0o600))
	if got := f.getLines("/api/agents/g/events"); !bytes.Equal(got, history) {
		t.Fatalf("with a torn last line:\n%s\nwant every whole line and nothing else:\n%s", got, history)
	}

	garbled := append(append(bytes.Join(lines[:2], nil), "\x00\x00garbage\n"...), bytes.Join(lines[2:], nil)...)
	must(t, os.WriteFile(file, garbled, 0o600))
	warning := file + ", line 3, is not an event and is left out: invalid character"
	got := bytes.SplitAfter(f.getLines("/api/agents/g/events"), []byte("\n"))
	if len(got) != len(lines)+2 || !bytes.Contains(got[2], []byte(`"type":"warning"`)) || !bytes.Contains(got[2], []byte(warning)) ||
		!bytes.Equal(bytes.Join(append(got[:2:2], got[3:]...), nil), history) {
		t.Fatalf("JSON Lines:\n%s\nwant the warning %q as line 3 and every other line as it is", bytes.Join(got, nil), warning)
	}
	data, ids := sse(t, f.do("/api/agents/g/events?follow=1", nil, ""))
	if !bytes.Equal(data, bytes.Join(got, nil)) || len(ids) != len(lines)+1 || ids[2] != "3" || ids[len(ids)-1] != strconv.Itoa(len(ids)) {
		t.Fatalf("the stream: ids %v, data:\n%s\nwant the JSON Lines, each line's number its id", ids, data)
	}
}

// getLines is the body of a GET that answers 200.
func (f *fixture) getLines(path string) []byte {
	f.t.Helper()
	resp := f.do(path, nil, "")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-ndjson") {
		f.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return b
}
