package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A run refused once its agent is stored (an MCP server that does not
// start) leaves the blobs it stored, which no agent refers to: gc keeps
// them for an hour, as it keeps those of an agent being made, and removes
// them after.
func TestRefusedRunBlobsRemovedByGC(t *testing.T) {
	agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n"+
		"mcp:\n  - name: x\n    command: [/nonexistent/server]\n", "turns: [{text: hi}]\n")
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", agentFile, "go"); code != exitFailed {
		t.Fatalf("run: exit %d: %s; want %d", code, errOut, exitFailed)
	}
	blobs := storedBlobs(t, store)
	if len(blobs) == 0 {
		t.Fatal("the refused run left no blobs")
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
