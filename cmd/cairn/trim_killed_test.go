package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Regression: a run that keeps the changes of the last 10 rounds removed
// an older round's with a plain removal, file by file, so that a run
// killed with SIGKILL in the middle left part of that round's kept
// changes, under the round's name, for undo and diff to read. A real
// cairn resume, its eleventh round's changes kept, is killed while it
// removes the first round's (padded to take long to remove); the first
// round's kept changes are then whole or gone, never in part.
func TestRunKilledWhileItRemovesAnOldRoundsChangesLeavesNoPartOfThem(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	must(t, os.Mkdir(ws, 0o755))
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := range 11 {
		fmt.Fprintf(&script, "  - tool_calls: [{name: write_file, input: {path: f%d.txt, content: x}}]\n", i)
	}
	script.WriteString("  - text: done\n")
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: trimmed
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
limits: {max_rounds: 10}
`), 0o644))
	store := t.TempDir()
	// Ten rounds, each one's changes kept; the run stops at its limit.
	out, _ := exec.Command(bin, "run", "--store", store, "--cache", cacheForTests(t), "--id", "v", "-f", agent).CombinedOutput()
	first := filepath.Join(store, "agents", "v", "changes", "round-1")
	had, err := os.ReadDir(first)
	if err != nil || len(had) == 0 {
		t.Fatalf("the first round's changes are not kept (%v):\n%s", err, out)
	}
	const pad = 20000
	for i := range pad {
		must(t, os.WriteFile(filepath.Join(first, fmt.Sprintf("pad%06d.cbor", i)), nil, 0o600))
	}
	whole := len(had) + pad

	resume := exec.Command(bin, "resume", "--store", store, "--cache", cacheForTests(t), "--max-rounds", "20", "v")
	must(t, resume.Start())
	samples := make([]string, 0, 40)
	for i := 0; i < pad; i += pad / 40 {
		samples = append(samples, filepath.Join(first, fmt.Sprintf("pad%06d.cbor", i)))
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		gone := false
		for _, s := range samples {
			if _, err := os.Lstat(s); err != nil {
				gone = true
				break
			}
		}
		if gone {
			break
		}
		if time.Now().After(deadline) {
			resume.Process.Kill()
			resume.Wait()
			t.Fatal("the resume removed nothing of the first round's changes in 60s")
		}
	}
	resume.Process.Signal(syscall.SIGKILL)
	resume.Wait()

	if left, err := os.ReadDir(first); err == nil && len(left) != whole {
		t.Fatalf("the first round's kept changes hold %d of their %d files after the kill: a part of them is left", len(left), whole)
	}
}
