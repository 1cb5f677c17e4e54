package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a fork copies its source's definition, and never checked
// that the store still keeps the blobs it names: with the agent file's
// blob lost from the store, `cairn fork` made an agent whose first run
// failed with blob not found. It fails (exit 1) naming the blob and what
// to do, and makes nothing.
func TestForkOfAnAgentWhoseAgentFileBlobIsLostIsRefused(t *testing.T) {
	t.Parallel()
	agentFile, store := scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: one}}]\n  - text: done\n")
	if code, _, errOut := cairnProcess(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cairnProcess(t, "snapshot", "--store", store, "--label", "old", "w"); code != exitDone {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(agentFile)
	must(t, err)
	sum := sha256.Sum256(b)
	must(t, os.Remove(filepath.Join(store, "blobs", "sha256", hex.EncodeToString(sum[:]))))
	for _, from := range [][]string{nil, {"--from", "old"}} {
		ws := filepath.Join(t.TempDir(), "f")
		args := append(append([]string{"fork", "--store", store, "--as", "f", "--workspace", ws}, from...), "w")
		code, out, errOut := cairnProcess(t, args...)
		if code != exitFailed || !strings.Contains(errOut, "(blob sha256:"+hex.EncodeToString(sum[:])+") is missing from the store") ||
			!strings.Contains(errOut, "restore the store's blobs from a backup") || strings.Contains(errOut, "lost the workspace") {
			t.Fatalf("fork %v of an agent whose agent file blob is lost: exit %d: %s%s", from, code, out, errOut)
		}
		if _, err := os.Stat(filepath.Join(store, "agents", "f")); !os.IsNotExist(err) {
			t.Errorf("the refused fork left agent f: %v", err)
		}
		if _, err := os.Stat(ws); !os.IsNotExist(err) {
			t.Errorf("the refused fork left its workspace: %v", err)
		}
	}
}
