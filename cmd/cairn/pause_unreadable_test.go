package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn pause` of an agent that cannot be read printed
// "agent X is : agent is not running, nothing to pause", an empty status.
// It says the agent is unreadable and why, in show's words, and exits 1.
func TestPauseOfAnUnreadableAgentSaysWhy(t *testing.T) {
	store := t.TempDir()
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "u", "-f", crashAgent(t)); code != exitDone {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	snaps, err := filepath.Glob(filepath.Join(store, "agents", "u", "snap-*.cbor"))
	must(t, err)
	data, err := os.ReadFile(snaps[len(snaps)-1])
	must(t, err)
	for i := 60; i < min(260, len(data)); i++ {
		data[i] = 0xaa
	}
	must(t, os.WriteFile(snaps[len(snaps)-1], data, 0o600))
	_, _, showErr := cairn(t, "show", "--store", store, "u")
	why := strings.TrimSuffix(strings.TrimPrefix(showErr, "cairn: "), "\n")
	code, _, errOut := cairn(t, "pause", "--store", store, "u")
	want := "cairn: agent u is unreadable: agent is not running, nothing to pause; " + why + "\n"
	if code != exitFailed || errOut != want || !strings.Contains(why, "is corrupt at offset") {
		t.Fatalf("pause: exit %d, %q\nwant exit %d, %q", code, errOut, exitFailed, want)
	}
}
