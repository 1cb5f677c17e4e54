package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Regression: README's sample of what `cairn resume` prints left out the
// `agent X · run …` line that resume prints after loading the agent. An
// agent like the sample's (three rounds committed, a fourth of two
// read_file calls stopped with one finished) is resumed, and README's
// sample lines, their numbers and ids aside, are the first lines it
// prints, in order.
func TestReadmeResumeSampleIsWhatResumePrints(t *testing.T) {
	sample := readmeResumeSample(t)
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "workspace", "a.txt"), []byte("alpha\n"), 0o644))
	read := "{name: read_file, input: {path: a.txt}}"
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(fmt.Sprintf("turns:\n"+
		"  - tool_calls: [%[1]s]\n  - tool_calls: [%[1]s]\n  - tool_calls: [%[1]s]\n  - tool_calls: [%[1]s, %[1]s]\n  - text: done\n", read)), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte("name: crash\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n"+
		"tools: [{module: builtin, only: [read_file]}]\n"), 0o644))
	store, cache := filepath.Join(dir, "store"), cacheForTests(t)
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cache, "--id", "crash", "-f", agent); code != exitDone {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	// What a kill leaves: the journal up to the fourth round's first
	// result, with no commit mark that says more was durable.
	agentDir := filepath.Join(store, "agents", "crash")
	journals, err := filepath.Glob(filepath.Join(agentDir, "journal-*.log"))
	must(t, err)
	sort.Strings(journals)
	journal := journals[len(journals)-1]
	data, err := os.ReadFile(journal)
	must(t, err)
	cut, commits, start := 0, 0, 0
	for _, end := range frameEnds(data) {
		switch data[start+4] { // the frame's record type
		case 10: // RecCommit
			commits++
		case 8: // RecResult
			if commits == 3 && cut == 0 {
				cut = end
			}
		}
		start = end
	}
	if cut == 0 {
		t.Fatalf("the journal has no result after its third commit")
	}
	must(t, os.WriteFile(journal, data[:cut], 0o600))
	must(t, os.Remove(filepath.Join(agentDir, "committed")))

	code, out, errOut := cairn(t, "resume", "--store", store, "--cache", cache, "crash")
	if code != exitDone {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < len(sample) {
		t.Fatalf("resume printed %d lines, README's sample has %d:\n%s", len(lines), len(sample), out)
	}
	for i, want := range sample {
		if shape(lines[i]) != shape(want) {
			t.Errorf("README's sample line %d is\n\t%s\nand resume printed\n\t%s", i+1, want, lines[i])
		}
	}
}

var (
	runIDRE  = regexp.MustCompile(`run-[0-9a-f]{12}`)
	callIDRE = regexp.MustCompile(`call_\d+_\d+`)
	numberRE = regexp.MustCompile(`\d+`)
)

// shape is a line of resume's output without its numbers and ids.
func shape(line string) string {
	line = runIDRE.ReplaceAllString(line, "run-ID")
	return numberRE.ReplaceAllString(callIDRE.ReplaceAllString(line, "CALL"), "N")
}

// readmeResumeSample is the text block after README's `cairn resume AGENT`.
func readmeResumeSample(t *testing.T) []string {
	b, err := os.ReadFile("../../README.md")
	must(t, err)
	_, rest, ok := strings.Cut(string(b), "\ncairn resume AGENT ")
	if !ok {
		t.Fatal("README shows no `cairn resume AGENT` block")
	}
	_, rest, ok = strings.Cut(rest, "```text\n")
	block, _, _ := strings.Cut(rest, "```")
	if !ok || block == "" {
		t.Fatal("README shows no sample of resume's output")
	}
	return strings.Split(strings.TrimSuffix(block, "\n"), "\n")
}
