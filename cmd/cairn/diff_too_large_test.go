package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Regression: `cairn diff` read the whole of every file a round changed
// into memory (a call may stage up to its staging limit), and a text of
// more than 2,000 lines was read whole to be summarised in one line. A
// file larger than 1 MiB is not read: its change shows its sizes,
// too large to show, and the others their lines.
func TestDiffOfABigFileSaysItIsTooLarge(t *testing.T) {
	const size = 16 << 20
	agentFile, store := scriptAgent(t, `name: big
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, "turns:\n  - tool_calls:\n"+
		"      - {name: write_file, input: {path: big.txt, content: short}}\n"+
		"      - {name: write_file, input: {path: small.txt, content: \"hi\\n\"}}\n  - text: done\n")
	line := strings.Repeat("x", 63) + "\n"
	must(t, os.WriteFile(filepath.Join(filepath.Dir(agentFile), "workspace", "big.txt"), []byte(strings.Repeat(line, size/len(line))), 0o644))
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "big", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	code, out, errOut := cairn(t, "diff", "--store", store, "big")
	runtime.ReadMemStats(&m1)
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("diff allocated %d KiB", alloc>>10)
	want := fmt.Sprintf("round 1\nwrite big.txt (call_1_0)\n  too large to show: %d → 5 bytes\nwrite small.txt (call_1_1)\n  +hi\n", size)
	if code != exitDone || out != want {
		t.Fatalf("diff: exit %d %s\n%q\nwant\n%q", code, errOut, out, want)
	}
	if alloc > size/4 || alloc > 4<<20 {
		t.Fatalf("diff of a round that rewrote a %d MiB file allocated %d MiB", size>>20, alloc>>20)
	}
}
