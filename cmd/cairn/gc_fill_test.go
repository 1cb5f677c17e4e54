package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Regression: what a fork killed with SIGKILL while it filled the new
// agent's workspace left beside it (.cairn-fill-AGENT-NAME) was removed
// only by the next fill into the same parent directory, and cairn gc left
// it for good. A real cairn fork, into a directory beside the workspace
// of the agent it forks, is killed once the first file is written; cairn
// gc removes what it left, and leaves alone a fill directory whose flock
// a live process holds.
func TestGCRemovesWhatAForkKilledWhileFillingLeftBesideItsWorkspace(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, ws := undoAgent(t, bin)
	parent := filepath.Dir(ws)
	killed := exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "f", "-w", filepath.Join(parent, "forked"), "v")
	must(t, killed.Start())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		fills, _ := filepath.Glob(filepath.Join(parent, ".cairn-fill-*"))
		if len(fills) > 0 && anyFileUnder(fills[0]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fork wrote no file of the new workspace in 30s")
		}
	}
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	left, _ := filepath.Glob(filepath.Join(parent, ".cairn-fill-*"))
	if len(left) != 1 {
		t.Fatalf("the killed fork left %v beside its workspace; want its fill directory", left)
	}

	live := filepath.Join(parent, ".cairn-fill-g-other")
	must(t, os.Mkdir(live, 0o755))
	held, err := os.Open(live)
	must(t, err)
	defer held.Close()
	must(t, syscall.Flock(int(held.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))

	if out, err := exec.Command(bin, "gc", "--store", store).CombinedOutput(); err != nil {
		t.Fatalf("cairn gc: %v\n%s", err, out)
	}
	if _, err := os.Stat(left[0]); !os.IsNotExist(err) {
		t.Errorf("after cairn gc, %s is still there (%v); want it removed", filepath.Base(left[0]), err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("cairn gc removed the fill directory a live process holds: %v", err)
	}
	if gone, _ := filepath.Glob(filepath.Join(parent, ".cairn-fill-gone-*")); len(gone) > 0 {
		t.Errorf("cairn gc left %v", gone)
	}
}
