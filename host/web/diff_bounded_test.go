package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Regression: GET /diff put every line of a round's text changes in its
// answer, so a round that wrote long lines (two files of one long line
// each, here) was answered with megabytes (up to 32 MB: two texts of 16
// MB), which the page read again every two seconds. The answer carries
// at most diffBudget bytes of lines, every change still listed with its
// op and sizes, and says it was cut and where the whole diff is.
func TestDiffIsBoundedWithANote(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	long := strings.Repeat("x", diffBudget*3/4)
	f.run("w", doneAgent, "turns:\n  - tool_calls:\n"+
		"      - {name: write_file, input: {path: a.txt, content: \""+long+"\"}}\n"+
		"      - {name: write_file, input: {path: b.txt, content: \""+long+"\"}}\n"+
		"      - {name: write_file, input: {path: c.txt, content: \"short\"}}\n  - text: done\n")
	resp := f.do("/api/agents/w/diff", nil, "")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(t, err)
	if resp.StatusCode != http.StatusOK || len(body) > diffBudget+64<<10 {
		t.Fatalf("GET /diff: %d, %d bytes; want 200 and at most about %d", resp.StatusCode, len(body), diffBudget)
	}
	var diff struct {
		Changes   []change `json:"changes"`
		Truncated bool     `json:"truncated"`
		Note      string   `json:"note"`
	}
	f.getJSON("/api/agents/w/diff", &diff)
	if len(diff.Changes) != 3 || !diff.Truncated || !strings.Contains(diff.Note, "cairn diff w --round 1") {
		t.Fatalf("diff: %d changes, truncated %v, note %q; want all 3 changes, cut, saying where the whole diff is", len(diff.Changes), diff.Truncated, diff.Note)
	}
	for _, c := range diff.Changes {
		if c.AfterSize <= 0 {
			t.Errorf("change %s lost its size: %+v", c.Path, c.FileChange)
		}
	}
}
