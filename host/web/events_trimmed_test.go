package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// The events of an agent whose old rounds `cairn gc --keep-rounds`
// removed start with the warning that says so, of no run, so that
// ?run= keeps it too; and the lines kept keep their numbers, so that a
// page that had read the history before the trim, and follows it with
// after= or Last-Event-ID, gets the lines after those it has, not lines
// it skips.
func TestTrimmedHistoryStartsWithItsWarningAndKeepsItsLineNumbers(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	var script strings.Builder
	script.WriteString("turns:\n")
	for r := 1; r <= 8; r++ {
		fmt.Fprintf(&script, "  - tool_calls: [{name: write_file, input: {path: f.txt, content: 'round %d'}}]\n", r)
	}
	script.WriteString("  - text: done\n")
	_, res := f.run("w", doneAgent, script.String())
	before := bytes.Split(bytes.TrimSuffix(f.history("w"), []byte("\n")), []byte("\n"))
	got, err := host.Collect(context.Background(), f.store, checkpoint.Retention{Rounds: 3})
	if err != nil || len(got.Trimmed) != 2 {
		t.Fatalf("collect: %+v, %v", got, err)
	}
	resp := f.do("/api/agents/w/events?run="+res.Run, nil, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	body, _ := io.ReadAll(resp.Body)
	sc := bufio.NewScanner(bytes.NewReader(body))
	var lines []host.Event
	for sc.Scan() {
		var e host.Event
		must(t, json.Unmarshal(sc.Bytes(), &e))
		lines = append(lines, e)
	}
	if len(lines) < 2 || !lines[0].Trimmed() || lines[0].Round != 7 || !strings.Contains(lines[0].Text, "before round 7") ||
		lines[1].Round != 7 {
		t.Fatalf("events after the trim begin %s", body[:min(len(body), 600)])
	}
	removed := int(lines[0].Removed)
	if removed+len(lines)-1 != len(before) {
		t.Fatalf("%d lines removed and %d kept, of %d", removed, len(lines)-1, len(before))
	}
	// The first line kept has the number it had: the line after the
	// ones a client read before the trim.
	data, ids := sse(t, f.do(fmt.Sprintf("/api/agents/w/events?follow=1&after=%d", removed), nil, ""))
	if len(ids) == 0 || ids[0] != fmt.Sprint(removed+1) || !bytes.HasPrefix(data, append(before[removed], '\n')) {
		t.Fatalf("after=%d: ids %v, data begins %q, want line %d: %q", removed, ids[:min(len(ids), 3)], data[:min(len(data), 200)], removed+1, before[removed])
	}
	_, ids = sse(t, f.do("/api/agents/w/events?follow=1", nil, ""))
	if len(ids) < 2 || ids[0] != fmt.Sprint(removed) || ids[1] != fmt.Sprint(removed+1) {
		t.Fatalf("a whole playback's ids begin %v, want %d, %d", ids[:min(len(ids), 3)], removed, removed+1)
	}
}
