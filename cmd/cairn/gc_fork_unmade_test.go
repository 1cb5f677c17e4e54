package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Regression: a fork with no --as, killed with SIGKILL once its filled
// workspace was in place and before it made the agent, left a whole copy
// of the workspace beside the original's, under an id made for it that no
// one was told: the fork run again forked as another id, and nothing ever
// named or removed the copy. A real cairn fork is killed as soon as its
// workspace is in place; cairn gc names it, leaves it, and says how to
// run that fork again, which, run as said, makes the agent; gc then names
// nothing.
func TestGCNamesTheWorkspaceOfAForkKilledBeforeItMadeTheAgent(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, ws := undoAgent(t, bin)
	parent := filepath.Dir(ws)
	for try := 0; ; try++ {
		if try == 10 {
			t.Skip("in 10 tries, no fork was killed between its workspace's rename and the agent's making")
		}
		killed := exec.Command(bin, "fork", "--store", store, "v")
		must(t, killed.Start())
		var made string
		for deadline := time.Now().Add(30 * time.Second); made == ""; time.Sleep(100 * time.Microsecond) {
			dirs, _ := filepath.Glob(filepath.Join(parent, "workspace-v-fork-*"))
			for _, d := range dirs {
				if entries, _ := os.ReadDir(d); len(entries) > 0 {
					made = d
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("the fork put no workspace in place in 30s")
			}
		}
		killed.Process.Signal(syscall.SIGKILL)
		killed.Wait()
		if _, err := os.Stat(filepath.Join(made, ".cairn-fork-unmade")); err != nil {
			must(t, os.RemoveAll(made))
			continue // killed too late: the fork was done
		}

		out, err := exec.Command(bin, "gc", "--store", store).CombinedOutput()
		if err != nil {
			t.Fatalf("cairn gc: %v\n%s", err, out)
		}
		again := regexp.MustCompile(`left ` + regexp.QuoteMeta(made) + `: .*run it again \((cairn fork [^)]*)\)`).FindSubmatch(out)
		if again == nil {
			t.Fatalf("cairn gc does not name %s, left by the killed fork, with the fork to run again:\n%s", made, out)
		}
		if entries, _ := os.ReadDir(made); len(entries) == 0 {
			t.Fatalf("cairn gc emptied %s", made)
		}
		args := strings.Fields(string(again[1]))[1:]
		args = append(args[:1], append([]string{"--store", store}, args[1:]...)...)
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("the fork run again as gc says, %v: %v\n%s", args, err, out)
		}
		if out, err := exec.Command(bin, "gc", "--store", store).CombinedOutput(); err != nil || strings.Contains(string(out), "left ") {
			t.Errorf("cairn gc once the fork was run again: %v\n%s", err, out)
		}
		return
	}
}
