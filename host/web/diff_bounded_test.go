package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Regression: GET /diff put every line of a round's text changes in its
// answer, so a round that wrote long lines (two files of one long line
// each, here) was answered with megabytes (up to 32 MB: two texts of 16
// MB), which the page read again every two seconds. The answer carries
// at most diffBudget bytes of lines, every change still listed with its
// op and sizes, and says it was cut and where the whole diff is.
func TestDiffIsBoundedWithANote(t *testing.T) {
	diff := diffOfLongWrites(t, strings.Repeat("x", diffBudget*3/4))
	if len(diff.Changes) != 3 || !diff.Truncated || !strings.Contains(diff.Note, "cairn diff w --round 1") {
		t.Fatalf("diff: %d changes, truncated %v, note %q; want all 3 changes, cut, saying where the whole diff is", len(diff.Changes), diff.Truncated, diff.Note)
	}
	for _, c := range diff.Changes {
		if c.AfterSize <= 0 {
			t.Errorf("change %s lost its size: %+v", c.Path, c.FileChange)
		}
	}
}

// Regression: GET /diff counted the raw bytes of the lines it sent, not
// the bytes of their JSON, where a control byte is six (\u0001), as are
// <, > and &: a round that wrote text of them was answered with six times
// diffBudget. The bytes sent are bounded, the cut line still whole JSON
// and valid text.
func TestDiffIsBoundedInTheBytesSent(t *testing.T) {
	diff := diffOfLongWrites(t, strings.Repeat(`\x01<`, diffBudget*3/8))
	if len(diff.Changes) != 3 || !diff.Truncated || len(diff.Changes[0].Lines) == 0 || !diff.Changes[0].Cut {
		t.Fatalf("diff: %d changes, truncated %v; want all 3 changes, the first with its lines cut", len(diff.Changes), diff.Truncated)
	}
	for _, c := range diff.Changes {
		for _, l := range c.Lines {
			if !utf8.ValidString(l) || strings.Trim(l, "+ \x01<…") != "" {
				t.Fatalf("change %s has a line that is not a part of what was written: %.40q", c.Path, l)
			}
		}
	}
}

// boundedDiff is the answer of GET /diff.
type boundedDiff struct {
	Changes   []change `json:"changes"`
	Truncated bool     `json:"truncated"`
	Note      string   `json:"note"`
}

// diffOfLongWrites is GET /diff of a round that wrote text, a YAML
// double-quoted string, to a.txt and b.txt and "short" to c.txt; it fails
// t unless the answer is 200 and about diffBudget bytes at most.
func diffOfLongWrites(t *testing.T, text string) boundedDiff {
	t.Helper()
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, "turns:\n  - tool_calls:\n"+
		"      - {name: write_file, input: {path: a.txt, content: \""+text+"\"}}\n"+
		"      - {name: write_file, input: {path: b.txt, content: \""+text+"\"}}\n"+
		"      - {name: write_file, input: {path: c.txt, content: \"short\"}}\n  - text: done\n")
	resp := f.do("/api/agents/w/diff", nil, "")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(t, err)
	if resp.StatusCode != http.StatusOK || len(body) > diffBudget+64<<10 {
		t.Fatalf("GET /diff: %d, %d bytes; want 200 and at most about %d", resp.StatusCode, len(body), diffBudget)
	}
	var diff boundedDiff
	must(t, json.Unmarshal(body, &diff))
	return diff
}

// jsonSize counts what writeJSON's encoder writes, rune by rune: every
// rune below U+3000 and those escaped or long above it, and a byte that is
// not UTF-8.
func TestDiffLineSizeIsItsJSON(t *testing.T) {
	var texts []string
	for r := rune(0); r < 0x3000; r++ {
		texts = append(texts, string(r))
	}
	texts = append(texts, "\u2028", "\u2029", "\ufffd", "\U0010ffff", "\xff", `a"b\c<d>e&f`+"\x00\x7f\n")
	for _, s := range texts {
		var b strings.Builder
		must(t, json.NewEncoder(&b).Encode([]string{s, s}))
		if want := b.Len() - len("[]\n"); jsonSize(s)*2-1 != want {
			t.Fatalf("jsonSize(%q) = %d; encoding/json writes %d bytes for two", s, jsonSize(s), want)
		}
	}
}

// Regression: GET /diff bounded the JSON of a round's lines but listed
// every path the round changed, so a call that made many files of long
// names (600 of some 3,800 bytes each, here, under the default limits)
// was answered with megabytes however small its lines. The whole answer
// is bounded: the changes past diffBudget are left out, and the answer
// says how many, and where the whole diff is.
func TestDiffOfManyPathsIsBounded(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	dir := filepath.Join(f.agents, "many")
	must(t, os.MkdirAll(dir, 0o755))
	spinModule(t, f.eng, dir)
	f.run("many", `
name: many
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [deepflood], grant: {workspace: rw}}]
`, "turns:\n  - tool_calls: [{name: deepflood, input: {n: 600}}]\n  - text: done\n")
	_, all, err := f.eng.Changes(context.Background(), "many", 0)
	must(t, err)
	resp := f.do("/api/agents/many/diff", nil, "")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(t, err)
	if resp.StatusCode != http.StatusOK || len(body) > diffBudget+4<<10 {
		t.Fatalf("GET /diff of %d changes: %d, %d bytes; want 200 and at most about %d", len(all), resp.StatusCode, len(body), diffBudget)
	}
	var diff struct {
		boundedDiff
		LeftOut int `json:"left_out"`
	}
	must(t, json.Unmarshal(body, &diff))
	if !diff.Truncated || diff.LeftOut == 0 || len(diff.Changes)+diff.LeftOut != len(all) ||
		!strings.Contains(diff.Note, fmt.Sprintf("%d of the round's %d changes", diff.LeftOut, len(all))) ||
		!strings.Contains(diff.Note, "cairn diff many --round 1") {
		t.Fatalf("diff of %d changes: %d listed, left_out %d, truncated %v, note %q; want the rest counted as left out and the note saying so", len(all), len(diff.Changes), diff.LeftOut, diff.Truncated, diff.Note)
	}
	for i, c := range diff.Changes {
		if c.Path != all[i].Path || c.Op != all[i].Op {
			t.Fatalf("change %d: %s %s; want the round's own %s %s, in order", i, c.Op, c.Path, all[i].Op, all[i].Path)
		}
	}
}

// Regression: a diff with one change left out said "1 of the round's 2
// changes are left out".
func TestLeftOutNoteCountsOne(t *testing.T) {
	for _, c := range []struct {
		leftOut, total int
		want           string
	}{
		{1, 2, "1 of the round's 2 changes is left out"},
		{2, 5, "2 of the round's 5 changes are left out"},
		{1, 1, "1 of the round's 1 change is left out"},
	} {
		if got := leftOutNote(c.leftOut, c.total); got != c.want {
			t.Errorf("leftOutNote(%d, %d) = %q, want %q", c.leftOut, c.total, got, c.want)
		}
	}
}
