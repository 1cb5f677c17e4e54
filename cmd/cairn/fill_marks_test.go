package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a fork or resume --workspace of an agent kept in
// PostgreSQL, killed with SIGKILL while it filled its workspace, left its
// .cairn-fill-* directory for good: only a store directory kept marks of
// fills, so neither cairn gc nor the next fill knew where to look. Real
// cairn fork and resume --workspace processes on a PostgreSQL store are
// killed while they fill directories no agent records; cairn gc on the
// same machine removes what the fork left, the resume run again removes
// what the killed one left, and nothing is left beside either.
func TestWhatAFillOfAPostgresAgentKilledLeftIsRemoved(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	url := pgtest.Shared(t).NewDatabase(t)
	undoAgentIn(t, bin, url)
	env := append(os.Environ(), "TMPDIR="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir()) // this machine's marks, the test's own
	cmd := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Env = env
		return c
	}
	forkParent, resumeParent := t.TempDir(), t.TempDir()
	forked := killWhileFilling(t, cmd("fork", "--store", url, "--at-round", "1", "--as", "f",
		"-w", filepath.Join(forkParent, "unrelated"), "v"), forkParent)
	out, err := cmd("gc", "--store", url).CombinedOutput()
	if err != nil {
		t.Fatalf("cairn gc: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "removed "+forked+",") {
		t.Errorf("cairn gc does not say it removed %s:\n%s", forked, out)
	}
	noFillIn(t, forkParent)

	ws := filepath.Join(resumeParent, "elsewhere")
	resume := func() *exec.Cmd {
		return cmd("resume", "--store", url, "--cache", cacheForTests(t), "--workspace", ws, "v")
	}
	killWhileFilling(t, resume(), resumeParent)
	if out, err := resume().CombinedOutput(); err != nil {
		t.Fatalf("the resume run again: %v\n%s", err, out)
	}
	onlyOneEntryIn(t, resumeParent, "beside the workspace the resume run again filled")
}

// Regression: a fill removed, beside the directory it filled, and cairn gc
// beside each agent's workspace and each directory the store's marks
// named, every directory named as a fill's (.cairn-fill-*) that no
// process held, whatever had left it: what a fill of another store was
// killed leaving (its own store's mark then named nothing), or a
// directory no fill marked, which may be anyone's. A real cairn fork of
// one store is killed while it fills a directory beside which a person
// made one named as a fill's; a fork of another store into the same
// parent directory, and cairn gc of that store, leave both; cairn gc of
// the first store removes what its fork left, and leaves the person's.
func TestAFillAndGCRemoveOnlyWhatTheirStoresMarksName(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	storeA, _ := undoAgent(t, bin)
	storeB, _ := undoAgent(t, bin)
	parent := t.TempDir()
	leftB := killWhileFilling(t, exec.Command(bin, "fork", "--store", storeB, "--at-round", "1", "--as", "f",
		"-w", filepath.Join(parent, "b"), "v"), parent)
	persons := filepath.Join(parent, ".cairn-fill-mine")
	must(t, os.Mkdir(persons, 0o755))
	must(t, os.WriteFile(filepath.Join(persons, "notes.txt"), []byte("mine\n"), 0o644))

	if out, err := exec.Command(bin, "fork", "--store", storeA, "--at-round", "1", "--as", "g",
		"-w", filepath.Join(parent, "a"), "v").CombinedOutput(); err != nil {
		t.Fatalf("a fork of the other store into the same directory: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "gc", "--store", storeA).CombinedOutput(); err != nil || strings.Contains(string(out), ".cairn-fill-") {
		t.Errorf("cairn gc of the other store: %v\n%s", err, out)
	}
	for _, d := range []string{leftB, persons} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("after a fork and gc of another store, %s is gone (%v); want it left", filepath.Base(d), err)
		}
	}
	out, err := exec.Command(bin, "gc", "--store", storeB).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "removed "+leftB+",") || strings.Contains(string(out), persons) {
		t.Errorf("cairn gc of the fork's store: %v\n%s", err, out)
	}
	if _, err := os.Stat(leftB); !os.IsNotExist(err) {
		t.Errorf("after cairn gc of the fork's store, what its killed fork left is there (%v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(persons, "notes.txt")); string(b) != "mine\n" {
		t.Errorf("the person's directory named as a fill's lost its file: %q, %v", b, err)
	}
}

// killBeforeItFills starts a real cairn fork or resume --workspace (fork
// makes its command) into the directory ws of parent, over and over, until
// a SIGSTOP lands once ready says it has begun and before the fill's
// directory is made beside ws, and kills it there with SIGKILL. Before each try, reset readies
// parent and the store; what a kill that lands later leaves is removed.
func killBeforeItFills(t *testing.T, fork func() *exec.Cmd, parent, ws string, ready func() bool, reset func()) {
	t.Helper()
	for range 200 {
		reset()
		cmd := fork()
		must(t, cmd.Start())
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		for waiting := true; waiting && !ready(); {
			select {
			case <-done:
				waiting = false
			default:
			}
		}
		cmd.Process.Signal(syscall.SIGSTOP)
		fills, _ := filepath.Glob(filepath.Join(filepath.Dir(ws), ".cairn-fill-*"))
		entries, err := os.ReadDir(ws)
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		if err == nil && len(fills) == 0 && len(entries) == 0 {
			return
		}
		removeAllIn(t, parent)
	}
	t.Fatalf("no SIGSTOP in 200 tries of %s landed after it began and before it began to fill its workspace", fork().Args[1])
}

// removeAllIn removes everything in dir.
func removeAllIn(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		must(t, os.RemoveAll(filepath.Join(dir, e.Name())))
	}
}

// Regression: a fork killed with SIGKILL after it made the new agent's
// workspace directory (and the directories above it it needed) and before
// it began to fill it left them empty, and cairn gc neither named nor
// removed them. A real cairn fork into a directory two levels below one
// that is there is killed at that moment: cairn gc --dry-run names the
// directories it would remove, and cairn gc removes them, and the same
// fork killed again there and run again makes the agent. A fork killed
// there into an empty directory a person made leaves it to gc, which
// does not name it, and the fork run again makes the agent there.
func TestWhatAForkKilledBeforeItFilledMadeIsRemovedByGC(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	parent := t.TempDir()
	ws := filepath.Join(parent, "new", "ws")
	fork := func() *exec.Cmd {
		return exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "f", "-w", ws, "v")
	}
	made := func() bool { _, err := os.Stat(ws); return err == nil }

	killBeforeItFills(t, fork, parent, ws, made, func() {})
	out, err := exec.Command(bin, "gc", "--store", store, "--dry-run").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "would remove "+ws+",") || !strings.Contains(string(out), "would remove "+filepath.Dir(ws)+",") {
		t.Errorf("cairn gc --dry-run does not say it would remove %s and the directory above it: %v\n%s", ws, err, out)
	}
	if _, err := os.Stat(ws); err != nil {
		t.Errorf("cairn gc --dry-run removed %s: %v", ws, err)
	}
	out, err = exec.Command(bin, "gc", "--store", store).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "removed "+ws+",") {
		t.Errorf("cairn gc does not say it removed %s: %v\n%s", ws, err, out)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("after cairn gc, %s holds %d entries; want none: the fork made them all", parent, len(entries))
	}

	killBeforeItFills(t, fork, parent, ws, made, func() {})
	if out, err := fork().CombinedOutput(); err != nil {
		t.Fatalf("the fork run again: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "first\n" {
		t.Errorf("a.txt of the fork run again holds %q, want round 1's", b)
	}

	mine := filepath.Join(t.TempDir(), "mine")
	forkMine := func() *exec.Cmd {
		return exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "m", "-w", mine, "v")
	}
	// The person's directory is there before the fork: it has begun once
	// it has marked its fill in the store (fills/<random>.fill).
	marks := filepath.Join(store, "fills")
	marked := func() bool { m, _ := filepath.Glob(filepath.Join(marks, "*.fill")); return len(m) > 0 }
	killBeforeItFills(t, forkMine, filepath.Dir(mine), mine, marked, func() {
		removeAllIn(t, marks)
		must(t, os.MkdirAll(mine, 0o755))
	})
	out, err = exec.Command(bin, "gc", "--store", store).CombinedOutput()
	if err != nil || strings.Contains(string(out), mine) {
		t.Errorf("cairn gc of a directory a person made: %v\n%s", err, out)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("cairn gc removed the directory a person made: %v", err)
	}
	if out, err := forkMine().CombinedOutput(); err != nil {
		t.Fatalf("the fork into the person's directory run again: %v\n%s", err, out)
	}
}

// Regression: cairn resume --workspace into a directory that was not
// there, killed with SIGKILL after it made it (and the directory above it
// it needed) and before it began to fill it, left them empty, and cairn
// gc neither named nor removed them. A real cairn resume is killed at that
// moment; cairn gc removes both, and the resume killed there again and
// run again fills the directory and goes on.
func TestWhatAResumeElsewhereKilledBeforeItFilledMadeIsRemovedByGC(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	parent := t.TempDir()
	ws := filepath.Join(parent, "new", "ws")
	resume := func() *exec.Cmd {
		return exec.Command(bin, "resume", "--store", store, "--cache", cacheForTests(t), "--workspace", ws, "v")
	}
	made := func() bool { _, err := os.Stat(ws); return err == nil }

	killBeforeItFills(t, resume, parent, ws, made, func() {})
	out, err := exec.Command(bin, "gc", "--store", store).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "removed "+ws+",") || !strings.Contains(string(out), "removed "+filepath.Dir(ws)+",") {
		t.Errorf("cairn gc does not say it removed %s and the directory above it: %v\n%s", ws, err, out)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("after cairn gc, %s holds %d entries; want none: the resume made them all", parent, len(entries))
	}

	killBeforeItFills(t, resume, parent, ws, made, func() {})
	if out, err := resume().CombinedOutput(); err != nil {
		t.Fatalf("the resume run again: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "log.txt")); string(b) != "base\nsecond\n" {
		t.Errorf("log.txt holds %q, want what the agent's last round left", b)
	}
}

// Regression: cairn gc --dry-run left out of what it would remove a
// directory a fork made above its workspace when what it held besides the
// workspace was the fill's directory, which the dry run removed no more
// than the workspace, where cairn gc then removed all three. A real cairn
// fork into a directory two levels below one that is there is killed
// while it fills; cairn gc --dry-run names the fill's directory, the
// workspace and the directory above it, and cairn gc removes just those.
func TestGCDryRunNamesTheDirectoriesAForkKilledWhileFillingMadeAboveItsWorkspace(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	parent := t.TempDir()
	ws := filepath.Join(parent, "new", "ws")
	left := killWhileFilling(t, exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "f", "-w", ws, "v"),
		filepath.Dir(ws))
	out, err := exec.Command(bin, "gc", "--store", store, "--dry-run").CombinedOutput()
	for _, d := range []string{left, ws, filepath.Dir(ws)} {
		if err != nil || !strings.Contains(string(out), "would remove "+d+",") {
			t.Errorf("cairn gc --dry-run does not say it would remove %s: %v\n%s", d, err, out)
		}
	}
	out, err = exec.Command(bin, "gc", "--store", store).CombinedOutput()
	if err != nil {
		t.Fatalf("cairn gc: %v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("after cairn gc, %s holds %d entries; want none: the fork made them all\n%s", parent, len(entries), out)
	}
}
