package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a fork or resume --workspace given a symbolic link to an
// empty directory (as a user points a path at a bigger disk) waited 10 s
// and failed saying another process kept it, though none did: the fill
// held the link's directory, which its check took for another's, and
// would have renamed its directory over the link. It fills the directory
// the link leads to, and leaves the link as it is; a link that leads
// nowhere is refused, exit 2, saying so, with nothing made.
func TestAForkOrResumeIntoALinkToAnEmptyDirectoryFillsIt(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	dir := t.TempDir()
	link := func(name string) (string, string) {
		target := filepath.Join(dir, name+"-target")
		must(t, os.Mkdir(target, 0o755))
		l := filepath.Join(dir, name)
		must(t, os.Symlink(target, l))
		return l, target
	}
	forkLink, forkTarget := link("fork")
	if out, err := exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "f", "-w", forkLink, "v").CombinedOutput(); err != nil {
		t.Fatalf("fork into a link to an empty directory: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(forkTarget, "a.txt")); string(b) != "first\n" {
		t.Errorf("a.txt where the link leads holds %q, want round 1's", b)
	}
	resumeLink, resumeTarget := link("resume")
	if out, err := exec.Command(bin, "resume", "--store", store, "--cache", cacheForTests(t), "--workspace", resumeLink, "v").CombinedOutput(); err != nil {
		t.Fatalf("resume into a link to an empty directory: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(resumeTarget, "log.txt")); string(b) != "base\nsecond\n" {
		t.Errorf("log.txt where the link leads holds %q, want what the agent's last round left", b)
	}
	for _, l := range []string{forkLink, resumeLink} {
		if fi, err := os.Lstat(l); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a link: %v", l, err)
		}
	}

	dangling := filepath.Join(dir, "dangling")
	must(t, os.Symlink(filepath.Join(dir, "nowhere"), dangling))
	cmd := exec.Command(bin, "fork", "--store", store, "--at-round", "1", "--as", "g", "-w", dangling, "v")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(out), "is a symbolic link to "+filepath.Join(dir, "nowhere")+", which is not there") {
		t.Errorf("fork into a link that leads nowhere: %v\n%s", err, out)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !os.IsNotExist(err) {
		t.Errorf("the refused fork made where the link leads: %v", err)
	}
}
