package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run refused before its agent is made (a script model file that is no
// script) may leave the module blobs it began to store, which no agent
// refers to: gc keeps them for an hour, as it keeps those of an agent
// being made, and removes them after.
func TestRefusedRunBlobsRemovedByGC(t *testing.T) {
	agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns: 5\n")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile, "go"); code != exitUsage {
		t.Fatalf("run: exit %d: %s; want %d", code, errOut, exitUsage)
	}
	blobs := storedBlobs(t, store)
	if len(blobs) == 0 {
		t.Skip("the refused run left no blobs")
	}
	if code, out, errOut := cairn(t, "gc", "--store", store); code != exitDone || len(storedBlobs(t, store)) != len(blobs) {
		t.Fatalf("gc right after the run: exit %d: %s%s; kept %d of %d blobs, want all", code, out, errOut, len(storedBlobs(t, store)), len(blobs))
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, b := range blobs {
		must(t, os.Chtimes(b, old, old))
	}
	code, out, errOut := cairn(t, "gc", "--store", store)
	if code != exitDone {
		t.Fatalf("gc: exit %d: %s%s", code, out, errOut)
	}
	if left := storedBlobs(t, store); len(left) != 0 {
		t.Errorf("gc left %s:\n%s", strings.Join(left, ", "), out)
	}
}

// storedBlobs are the files in the store's blobs/.
func storedBlobs(t *testing.T, store string) []string {
	t.Helper()
	var out []string
	for _, f := range storedFiles(t, store) {
		if strings.Contains(f, string(filepath.Separator)+"blobs"+string(filepath.Separator)) {
			out = append(out, f)
		}
	}
	return out
}
