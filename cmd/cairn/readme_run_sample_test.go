package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// README's "What you see" is what the README's first command prints: its
// lines down to the "..." are the first lines of a run of the example
// agent on a fresh copy of its workspace, and its last line the run's
// last, ids and durations aside. The calls a round starts side by side
// may be listed in either order.
func TestReadmeRunSampleIsWhatRunPrints(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	must(t, err)
	_, rest, ok := strings.Cut(string(b), "\n## What you see\n")
	if ok {
		_, rest, ok = strings.Cut(rest, "```text\n")
	}
	block, _, _ := strings.Cut(rest, "```")
	head, tail, cut := strings.Cut(block, "  ...\n")
	if !ok || !cut || head == "" || strings.TrimSpace(tail) == "" {
		t.Fatalf("README's \"What you see\" has no sample run with its \"...\":\n%s", block)
	}
	sample := strings.Split(strings.TrimSuffix(head, "\n"), "\n")

	code, out, errOut := cairn(t, append([]string{"run"}, exampleAgent(t)...)...)
	if code != exitDone {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < len(sample) {
		t.Fatalf("the run printed %d lines, README's sample %d before its \"...\":\n%s", len(lines), len(sample), out)
	}
	if got, want := runLines(lines[:len(sample)]), runLines(sample); !slices.Equal(got, want) {
		t.Errorf("README's sample begins\n\t%s\nand the run printed\n\t%s", strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
	}
	if got, want := runLines(lines[len(lines)-1:]), runLines([]string{strings.TrimSpace(tail)}); !slices.Equal(got, want) {
		t.Errorf("README's sample ends %q and the run %q", want[0], got[0])
	}
}

var (
	agentIDRE  = regexp.MustCompile(`hello-[0-9a-f]{12}`)
	durationRE = regexp.MustCompile(`\(\d+(\.\d+)? ms\)`)
)

// runLines are lines of a run's output without its ids and durations,
// each run of tool_start lines in name order.
func runLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		l = agentIDRE.ReplaceAllString(runIDRE.ReplaceAllString(l, "run-ID"), "hello-ID")
		out[i] = durationRE.ReplaceAllString(l, "(T ms)")
	}
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.HasPrefix(out[j], "  → ") {
			j++
		}
		slices.Sort(out[i:j])
		i = max(j, i+1)
	}
	return out
}
