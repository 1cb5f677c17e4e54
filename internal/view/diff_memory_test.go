package view

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// Regression: DiffLines built a table of (lines before + 1) × (lines
// after + 1) ints, 32 MB for two texts of 2,000 lines, for each change
// `cairn diff` and the web view showed. The diff of two such texts that
// differ on every third line allocates a small part of that, and is
// still a diff of the two.
func TestDiffLinesOfTwoThousandLinesStaysSmallInMemory(t *testing.T) {
	var before, after strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&before, "line %d of the text before\n", i)
		if i%3 == 0 {
			fmt.Fprintf(&after, "line %d changed\n", i)
		} else {
			fmt.Fprintf(&after, "line %d of the text before\n", i)
		}
	}
	a, b := []byte(before.String()), []byte(after.String())
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	out := DiffLines(a, b)
	runtime.ReadMemStats(&m1)
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("a diff of two texts of 2,000 lines allocated %d KiB", alloc>>10)
	if alloc > 1<<20 {
		t.Errorf("a diff of two texts of 2,000 lines allocated %d KiB, want less than 1 MiB", alloc>>10)
	}
	if old, new := applyDiff(t, out); old != before.String() || new != after.String() {
		t.Errorf("the diff's lines do not make the texts it was of")
	}
}

// applyDiff is the texts before and after that diff's lines make: shared
// and dropped lines before, shared and added lines after.
func applyDiff(t *testing.T, lines []string) (before, after string) {
	t.Helper()
	var a, b strings.Builder
	for _, l := range lines {
		if l == "" {
			t.Fatalf("an empty line in the diff %q", lines)
		}
		switch l[0] {
		case ' ':
			a.WriteString(l[1:] + "\n")
			b.WriteString(l[1:] + "\n")
		case '-':
			a.WriteString(l[1:] + "\n")
		case '+':
			b.WriteString(l[1:] + "\n")
		default:
			t.Fatalf("line %q of the diff is not marked", l)
		}
	}
	return a.String(), b.String()
}
