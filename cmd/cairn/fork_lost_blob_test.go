package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Regression: a fork at a round whose workspace is made from a blob the
// store has lost (removed by hand) exited 2, the code of a command line
// that names no agent, with only "blob sha256:…: not found". It is a
// failure (exit 1) that says the store lost a file of that round's
// workspace and what to do, and it makes no agent.
func TestForkAtARoundWhoseBlobIsLostSaysSo(t *testing.T) {
	flags := exampleAgent(t)
	store := flags[len(flags)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "d1"}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	blobs, err := filepath.Glob(filepath.Join(store, "blobs", "sha256", "*"))
	if err != nil || len(blobs) == 0 {
		t.Fatalf("no blobs to lose: %v %v", blobs, err)
	}
	for _, b := range blobs {
		must(t, os.Remove(b))
	}
	code, out, errOut := cairn(t, "fork", "--store", store, "--at-round", "4", "--as", "d2", "--workspace", filepath.Join(t.TempDir(), "d2"), "d1")
	if code != exitFailed || !strings.Contains(errOut, "the store has lost a file that the workspace of round 4 is made from") ||
		!strings.Contains(errOut, "restore the store's blobs from a backup") {
		t.Fatalf("fork at a round whose blob is lost: exit %d: %s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(store, "agents", "d2")); !os.IsNotExist(err) {
		t.Errorf("the refused fork left agent d2: %v", err)
	}
}

// Regression: a fork from a bookmark whose workspace blob the store has
// lost (removed by hand) exited 2, the code of a command line that names
// no agent or bookmark, with only "blob sha256:…: not found". It is a
// failure (exit 1) that says the store lost the bookmark's workspace and
// what to do, and it makes no agent.
func TestForkFromABookmarkWhoseBlobIsLostSaysSo(t *testing.T) {
	flags := exampleAgent(t)
	store := flags[len(flags)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "d1"}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	before, err := filepath.Glob(filepath.Join(store, "blobs", "sha256", "*"))
	must(t, err)
	if code, _, errOut := cairn(t, "snapshot", "--store", store, "--label", "b1", "d1"); code != exitDone {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	after, err := filepath.Glob(filepath.Join(store, "blobs", "sha256", "*"))
	must(t, err)
	lost := 0
	for _, b := range after {
		if !slices.Contains(before, b) {
			must(t, os.Remove(b)) // the bookmark's workspace
			lost++
		}
	}
	if lost != 1 {
		t.Fatalf("the snapshot stored %d blobs, want its workspace's", lost)
	}
	code, out, errOut := cairn(t, "fork", "--store", store, "--from", "b1", "--as", "d2", "--workspace", filepath.Join(t.TempDir(), "d2"), "d1")
	if code != exitFailed || !strings.Contains(errOut, `the store has lost the workspace of bookmark "b1"`) ||
		!strings.Contains(errOut, "restore the store's blobs from a backup") {
		t.Fatalf("fork from a bookmark whose blob is lost: exit %d: %s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(store, "agents", "d2")); !os.IsNotExist(err) {
		t.Errorf("the refused fork left agent d2: %v", err)
	}
}
