package filepool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestSummaryIsBounded(t *testing.T) {
	if got := Summary(nil); got != "" {
		t.Fatalf("Summary(nil) = %q", got)
	}
	var cs []Change
	for i := range 50 {
		cs = append(cs, Change{Path: fmt.Sprintf("f%02d", i), Kind: Deleted})
	}
	lines := strings.Split(Summary(cs), "\n")
	if len(lines) != maxSummaryLines+1 || lines[maxSummaryLines] != "… and 30 more files changed outside the agent." {
		t.Fatalf("Summary of 50 changes: %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	same := Change{Path: "a", Kind: Modified, Was: Entry{Size: 3}, Now: Version{Exists: true, Size: 3}}
	if got := same.String(); got != "a was modified outside the agent (3 bytes, new content)." {
		t.Fatalf("same-size change = %q", got)
	}
	// Regression: a count of one was plural, "(1 bytes)", "1 more files".
	one := Change{Path: "b", Kind: Created, Now: Version{Exists: true, Size: 1}}
	if got := one.String(); got != "b was created outside the agent (1 byte)." {
		t.Fatalf("a file of one byte = %q", got)
	}
	if got := Summary(cs[:maxSummaryLines+1]); !strings.HasSuffix(got, "\n… and 1 more file changed outside the agent.") {
		t.Fatalf("Summary of %d changes ends %q", maxSummaryLines+1, got[strings.LastIndex(got, "\n"):])
	}
}

// TestHashingStreams hashes a 32 MiB file and checks that the heap did not
// grow with it.
func TestHashingStreams(t *testing.T) {
	p, dir := newPool(t, State{}, Config{})
	const size = 32 << 20
	f, err := os.Create(filepath.Join(dir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e, err := p.Saw(context.Background(), "big.bin", 1, "c1", OpRead)
	runtime.ReadMemStats(&after)
	if err != nil || e.Size != size {
		t.Fatalf("Saw = %+v, %v", e, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("hashing %d bytes allocated %d bytes", size, grew)
	}
}
