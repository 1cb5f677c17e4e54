package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killWhileFilling starts cmd, a real cairn fork or resume --workspace
// whose workspace is made in parent, and kills it with SIGKILL once the
// first file of its fill is written; it returns what the kill left in
// parent as a fill's (.cairn-fill-*), one directory.
func killWhileFilling(t *testing.T, cmd *exec.Cmd, parent string) string {
	t.Helper()
	must(t, cmd.Start())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		fills, _ := filepath.Glob(filepath.Join(parent, ".cairn-fill-*"))
		if len(fills) > 0 && anyFileUnder(fills[0]) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no file of the fill was written in 30s")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	left, _ := filepath.Glob(filepath.Join(parent, ".cairn-fill-*"))
	if len(left) != 1 {
		t.Fatalf("the killed %s left %v; want its fill directory", cmd.Args[1], left)
	}
	return left[0]
}

// Regression: cairn gc looked for what a killed fill left only beside the
// workspaces agents record, so that a fork into an unrelated directory,
// or a resume --workspace into another one (the agent records its new
// workspace only once it is filled), killed with SIGKILL while it filled
// it, left .cairn-fill-AGENT-NAME there for good. Real cairn fork and
// resume --workspace processes are killed while they fill directories
// nothing records; cairn gc removes what each left, and says so, in text
// and in --json.
func TestGCRemovesWhatAFillKilledInAnUnrecordedDirectoryLeft(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	forkParent, resumeParent := t.TempDir(), t.TempDir()
	forked := killWhileFilling(t, exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "f",
		"-w", filepath.Join(forkParent, "unrelated"), "v"), forkParent)

	out, err := exec.Command(bin, "gc", "--store", store, "--dry-run").CombinedOutput()
	if err != nil {
		t.Fatalf("cairn gc --dry-run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "would remove "+forked) {
		t.Errorf("cairn gc --dry-run does not say it would remove %s:\n%s", forked, out)
	}
	if _, err := os.Stat(forked); err != nil {
		t.Errorf("cairn gc --dry-run removed %s: %v", forked, err)
	}
	out, err = exec.Command(bin, "gc", "--store", store, "--json").Output()
	if err != nil {
		t.Fatalf("cairn gc --json: %v\n%s", err, out)
	}
	var got struct {
		Fills []string `json:"fills"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("cairn gc --json printed %q: %v", out, err)
	}
	if !slices.Equal(got.Fills, []string{forked}) {
		t.Errorf("cairn gc --json says it removed the fills %v; want %s", got.Fills, forked)
	}
	noFillIn(t, forkParent)

	resumed := killWhileFilling(t, exec.Command(bin, "resume", "--store", store, "--cache", cacheForTests(t),
		"--workspace", filepath.Join(resumeParent, "elsewhere"), "v"), resumeParent)
	out, err = exec.Command(bin, "gc", "--store", store).CombinedOutput()
	if err != nil {
		t.Fatalf("cairn gc: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "removed "+resumed+",") || !strings.Contains(string(out), " and 1 fill directory,") {
		t.Errorf("cairn gc does not say it removed %s:\n%s", resumed, out)
	}
	noFillIn(t, resumeParent)
	if out, err := exec.Command(bin, "gc", "--store", store).CombinedOutput(); err != nil || strings.Contains(string(out), ".cairn-fill-") {
		t.Errorf("cairn gc run again: %v\n%s", err, out)
	}
}

// noFillIn fails the test if parent holds a fill's directory.
func noFillIn(t *testing.T, parent string) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(parent, ".cairn-fill-*")); len(left) > 0 {
		t.Errorf("after cairn gc, %v is left", left)
	}
}

// Regression: a fork into an unrelated directory, killed with SIGKILL while
// it filled it, left .cairn-fill-AGENT-NAME there, which only a fill into
// the same parent directory removed: a fork run again elsewhere, or as
// another agent into another directory, left it for good. A fork into
// another directory removes it.
func TestAForkElsewhereRemovesWhatAKilledFillLeft(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	parent := t.TempDir()
	left := killWhileFilling(t, exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "f",
		"-w", filepath.Join(parent, "unrelated"), "v"), parent)
	if out, err := exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "g",
		"-w", filepath.Join(t.TempDir(), "other"), "v").CombinedOutput(); err != nil {
		t.Fatalf("a fork elsewhere: %v\n%s", err, out)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("after a fork elsewhere, %s is still there (%v); want it removed", left, err)
	}
}
