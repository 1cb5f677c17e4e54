package overlay_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: a call saw the temporary file that Apply writes beside a
// path while it applies another call's changes (another agent sharing the
// workspace, a sibling sub-agent or a workflow's parallel step; or one left
// by a process killed mid-apply): listed, stated and read like any file.
// list_dir and glob showed it to the model, grep read it, and the agent's
// file pool tracked it, so the model was told, round after round, that
// ".cairn-apply-…" was created or deleted outside the agent. A call's view
// of the workspace leaves such files out, as the store's copy of it does.
func TestCallsDoNotSeeApplysTemporaryFiles(t *testing.T) {
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"a.txt": "a", "dir/b.txt": "b"})
	temps := []string{overlay.TempName("a.txt"), overlay.TempName("dir/b.txt")}
	for _, p := range temps {
		must(t, os.WriteFile(filepath.Join(ws, p), []byte("being applied"), 0o600))
	}
	ov, _ := newOverlay(t, ws)
	ops := []string{"ls:/work", "ls:/work/dir"}
	for _, p := range temps {
		ops = append(ops, "stat:/work/"+filepath.ToSlash(p), "cat:/work/"+filepath.ToSlash(p))
	}
	ops = append(ops, "rm:/work/"+filepath.ToSlash(temps[0]))
	got := ovprog(t, sandbox.Mount{Overlay: ov}, ops...)
	if got[0] != "ls /work [a.txt dir/]" || got[1] != "ls /work/dir [b.txt]" {
		t.Errorf("listings: %q, want the temporary files left out", got[:2])
	}
	for _, line := range got[2 : len(got)-1] {
		if !strings.Contains(line, "err") || !strings.Contains(line, "No such file") {
			t.Errorf("%s: want no such file", line)
		}
	}
	if rm := got[len(got)-1]; !strings.Contains(rm, "err") {
		t.Errorf("%s: a call removed another's temporary file", rm)
	}
	if effects, err := ov.Effects(); err != nil || len(effects) != 0 {
		t.Errorf("effects %v, %v; want none", effects, err)
	}
	described, listed := ov.Seen()
	if seen := strings.Join(append(append(ov.Reads(), described...), listed...), " "); strings.Contains(seen, ".cairn-apply-") {
		t.Errorf("the call's reads and sights name a temporary file: %s", seen)
	}
}
