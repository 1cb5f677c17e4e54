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

// Regression: a fork killed with SIGKILL while it filled the new agent's
// workspace left the files it had written, and no agent: the same fork
// run again was refused ("workspace … exists and is not empty; fork as
// another agent, or move the directory away"), over a directory only
// cairn had made. A real cairn fork is killed once the first file of the
// new workspace is written; the fork run again makes the agent, with the
// workspace of the round it forks, and nothing else is left beside it.
func TestForkKilledWhileFillingItsWorkspaceForksWhenRunAgain(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	parent := t.TempDir()
	ws := filepath.Join(parent, "forked")
	fork := func() *exec.Cmd {
		return exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "f", "-w", ws, "v")
	}

	killOnceAFileIsUnder(t, fork(), parent, "the fork wrote no file of the new workspace in 30s")

	if out, err := fork().CombinedOutput(); err != nil {
		t.Fatalf("the fork run again: %v\n%s", err, out)
	}
	for i := range undoFiles {
		name := fmt.Sprintf("f%06d", i)
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != fmt.Sprintf("before %d\n", i) {
			t.Fatalf("%s of the fork holds %q, want what it held at round 1", name, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "first\n" {
		t.Errorf("a.txt of the fork holds %q, want round 1's", b)
	}
	onlyOneEntryIn(t, parent, "beside the fork's workspace")
}

// killOnceAFileIsUnder starts cmd, kills it (SIGKILL) once a regular file
// is anywhere under dir, and waits for it; what says what cmd was to
// write, for the failure when none came within 30s.
func killOnceAFileIsUnder(t *testing.T, cmd *exec.Cmd, dir, what string) {
	t.Helper()
	must(t, cmd.Start())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if anyFileUnder(dir) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// onlyOneEntryIn fails t unless dir holds one entry (the workspace a fill
// made, nothing left beside it); where names it.
func onlyOneEntryIn(t *testing.T, dir, where string) {
	t.Helper()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s: %v; want only it", where, names)
	}
}

// anyFileUnder says whether a regular file is anywhere under dir.
func anyFileUnder(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// Regression: cairn resume --workspace into an empty directory, killed
// with SIGKILL while it filled it with the store's copy, left the files it
// had written, and the same resume run again was refused, the directory
// said to differ from the store's in every path the killed one had not
// written yet ("missing"), as if a person had put it there. A real cairn
// resume is killed once the first file is written; the resume run again
// fills the directory with the workspace at the agent's last round, and
// nothing else is left beside it.
func TestResumeElsewhereKilledWhileFillingItsWorkspaceResumesWhenRunAgain(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	parent := t.TempDir()
	ws := filepath.Join(parent, "moved")
	resume := func() *exec.Cmd {
		return exec.Command(bin, "resume", "--store", store, "--cache", cacheForTests(t), "--workspace", ws, "v")
	}

	killOnceAFileIsUnder(t, resume(), parent, "the resume wrote no file of the workspace in 30s")

	if out, err := resume().CombinedOutput(); err != nil {
		t.Fatalf("the resume run again: %v\n%s", err, out)
	}
	for i := range undoFiles {
		name := fmt.Sprintf("f%06d", i)
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != "x" {
			t.Fatalf("%s holds %q, want what the agent's last round left", name, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "log.txt")); string(b) != "base\nsecond\n" {
		t.Errorf("log.txt holds %q, want what the agent's last round left", b)
	}
	onlyOneEntryIn(t, parent, "beside the workspace")
}

// Regression: two forks, as two new agents, into one workspace directory
// at once both found it empty, both filled it and both were made: two
// agents sharing one workspace, each told the other's writes as changes
// made outside it; or the one refused removed, as what it had written,
// the workspace of the one made. Two real cairn fork processes start
// together; one is made, with its workspace whole, and the other is
// refused saying the directory exists and is not empty, and is not made.
func TestTwoForksIntoOneDirectoryAtOnceMakeOneAgent(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	ws := filepath.Join(t.TempDir(), "shared")
	var forks []*exec.Cmd
	var outs []*strings.Builder
	for _, as := range []string{"p1", "p2"} {
		cmd := exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", as, "-w", ws, "v")
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		must(t, cmd.Start())
		forks, outs = append(forks, cmd), append(outs, out)
	}
	made := 0
	for i, cmd := range forks {
		if cmd.Wait() == nil {
			made++
			continue
		}
		if !strings.Contains(outs[i].String(), ws+" exists and is not empty") {
			t.Errorf("the fork refused says %q; want the directory named as not empty", outs[i].String())
		}
	}
	if made != 1 {
		t.Errorf("%d forks were made into one directory; want one\n%s\n%s", made, outs[0].String(), outs[1].String())
	}
	ls, err := exec.Command(bin, "ls", "--store", store).CombinedOutput()
	must(t, err)
	if strings.Contains(string(ls), "p1") == strings.Contains(string(ls), "p2") {
		t.Errorf("cairn ls lists, of the forks p1 and p2, both or neither; want one:\n%s", ls)
	}
	for i := range undoFiles {
		name := fmt.Sprintf("f%06d", i)
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != fmt.Sprintf("before %d\n", i) {
			t.Fatalf("%s of the fork made holds %q, want what it held at round 1", name, b)
		}
	}
}

// Regression: a fork killed with SIGKILL while it filled the new agent's
// workspace left its directory beside the workspace
// (.cairn-fill-AGENT-NAME), which only the same fork, as the same agent
// into the same directory, removed: a fork run again as another agent
// forked and left it there for good. A real cairn fork is killed once
// the first file of the new workspace is written; a fork as another agent
// into the same directory forks, and nothing but the workspace is left.
func TestForkKilledWhileFillingLeavesNothingOnceAnotherForkFillsBesideIt(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	parent := t.TempDir()
	ws := filepath.Join(parent, "forked")
	fork := func(as string) *exec.Cmd {
		return exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", as, "-w", ws, "v")
	}

	killOnceAFileIsUnder(t, fork("f"), parent, "the fork wrote no file of the new workspace in 30s")

	if out, err := fork("g").CombinedOutput(); err != nil {
		t.Fatalf("the fork as another agent: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "first\n" {
		t.Errorf("a.txt of the fork holds %q, want round 1's", b)
	}
	onlyOneEntryIn(t, parent, "beside the fork's workspace")
}

// Regression: a fork killed with SIGKILL once it had renamed the filled
// workspace into place, before the new agent was made in the store, left
// a whole workspace and no agent, and the same fork run again was refused
// ("workspace … exists and is not empty"), over the workspace only it had
// filled. A real cairn fork of the last round is killed as soon as its
// workspace is in place (it then stores the workspace, hashing every file,
// before it makes the agent); the same fork run again makes the agent
// with that workspace, and leaves nothing of its own in it.
func TestForkKilledOnceItsWorkspaceIsInPlaceForksWhenRunAgain(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	parent := t.TempDir()
	for try := 0; ; try++ {
		if try == 10 {
			t.Skip("in 10 tries, no fork was killed between its workspace's rename and the agent's making")
		}
		as := fmt.Sprintf("f%d", try)
		ws := filepath.Join(parent, as)
		fork := func() *exec.Cmd {
			return exec.Command(bin, "fork", "--store", store, "--as", as, "-w", ws, "v")
		}
		killed := fork()
		must(t, killed.Start())
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Microsecond) {
			if entries, _ := os.ReadDir(ws); len(entries) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the fork put no workspace in place in 30s")
			}
		}
		killed.Process.Signal(syscall.SIGKILL)
		killed.Wait()
		if snaps, _ := filepath.Glob(filepath.Join(store, "agents", as, "snap-*")); len(snaps) > 0 {
			continue // killed too late: the agent was made
		}

		if out, err := fork().CombinedOutput(); err != nil {
			t.Fatalf("the fork run again: %v\n%s", err, out)
		}
		for i := range undoFiles {
			name := fmt.Sprintf("f%06d", i)
			if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != "x" {
				t.Fatalf("%s of the fork holds %q, want what the agent's last round left", name, b)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(ws, "log.txt")); string(b) != "base\nsecond\n" {
			t.Errorf("log.txt of the fork holds %q, want the last round's", b)
		}
		if entries, _ := os.ReadDir(ws); len(entries) != undoFiles+3 { // log.txt, a.txt, new.txt
			var names []string
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "f0") {
					names = append(names, e.Name())
				}
			}
			t.Errorf("the fork's workspace holds %d entries, want %d: %v besides the f files", len(entries), undoFiles+3, names)
		}
		out, err := exec.Command(bin, "show", "--store", store, as).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "v") {
			t.Errorf("cairn show %s: %v\n%s", as, err, out)
		}
		return
	}
}
