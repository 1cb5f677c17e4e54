package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Blobs no agent refers to any more (here, what an agent started afresh,
// its workspace and agent file changed, was made of before) are kept by
// gc for an hour, as it keeps those of an agent being made, and removed
// after; those the agent refers to now are kept. (A refused run, which
// once left such blobs, stores none now: TestRefusedRunStoresNothing.)
func TestBlobsNoAgentRefersToRemovedByGC(t *testing.T) {
	agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns: [{text: hi}]\n")
	notes := filepath.Join(filepath.Dir(agentFile), "workspace", "notes.txt")
	must(t, os.WriteFile(notes, []byte("the first agent's\n"), 0o644))
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	first := storedBlobs(t, store)
	must(t, os.WriteFile(notes, []byte("the second agent's\n"), 0o644))
	b, err := os.ReadFile(agentFile)
	must(t, err)
	must(t, os.WriteFile(agentFile, append(b, "system: You are made again.\n"...), 0o644))
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "--fresh", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run --fresh: exit %d: %s", code, errOut)
	}
	blobs := storedBlobs(t, store)
	if code, out, errOut := cairn(t, "gc", "--store", store); code != exitDone || len(storedBlobs(t, store)) != len(blobs) {
		t.Fatalf("gc right after the runs: exit %d: %s%s; kept %d of %d blobs, want all", code, out, errOut, len(storedBlobs(t, store)), len(blobs))
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, b := range blobs {
		must(t, os.Chtimes(b, old, old))
	}
	code, out, errOut := cairn(t, "gc", "--store", store)
	if code != exitDone {
		t.Fatalf("gc: exit %d: %s%s", code, out, errOut)
	}
	left := storedBlobs(t, store)
	var removed []string
	for _, b := range blobs {
		if !slices.Contains(left, b) {
			removed = append(removed, b)
		}
	}
	if len(removed) == 0 {
		t.Fatalf("gc removed no blob of the agent made before:\n%s", out)
	}
	for _, b := range removed {
		if !slices.Contains(first, b) {
			t.Errorf("gc removed %s, which only the agent made again stored:\n%s", b, out)
		}
	}
	// An export reads every blob the agent refers to.
	if code, out, errOut := cairn(t, "export", "--store", store, "-o", filepath.Join(t.TempDir(), "a.tar"), "a"); code != exitDone {
		t.Fatalf("export of the agent after gc: exit %d: %s%s; gc removed:\n%s", code, out, errOut, strings.Join(removed, "\n"))
	}
}
