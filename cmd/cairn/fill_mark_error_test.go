package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a fork whose fill could not be marked said so twice ("mark
// the fill of X, before it begins: mark the fill of X: …"). It says it
// once, with the file it could not write, and makes nothing.
func TestAFillThatCannotBeMarkedSaysSoOnce(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	store, _ := undoAgent(t, bin)
	must(t, os.WriteFile(filepath.Join(store, "fills"), []byte("not a directory\n"), 0o644))
	ws := filepath.Join(t.TempDir(), "ws")
	out, err := exec.Command(bin, "fork", "--store", store, "--as", "f", "-w", ws, "v").CombinedOutput()
	if err == nil || strings.Count(string(out), "mark the fill of") != 1 || !strings.Contains(string(out), filepath.Join(store, "fills")) {
		t.Errorf("fork with fills/ no directory: %v\n%s\nwant it to say once that it could not mark the fill, naming fills/", err, out)
	}
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Errorf("the fork made %s: %v", ws, err)
	}
}
