package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a parent stopped while its sub-agents ran, resumed with
// --workspace in another directory, had its workspace rebuilt from the
// store's copy at its boundary, which lacks what its sub-agents had
// changed since (the round that delegated keeps it only as it commits),
// and then resumed its sub-agents in the old directory: the tree's files
// were split between the two, and the new workspace lacked them. Such a
// resume is refused, nothing changed, and says to resume where it ran.
func TestResumeElsewhereWhileSubAgentsRanDoesNotSplitTheTree(t *testing.T) {
	eng, store, af := stoppedTree(t)
	old := af.WorkspaceDir()
	before := dirNames(t, old)
	ws := filepath.Join(t.TempDir(), "elsewhere")
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: "lead", Strategy: StrategySeal, Workspace: ws})
	if err == nil {
		t.Fatalf("resume elsewhere: %+v; the new workspace holds %q, the old one %q (before: %q)",
			res, dirNames(t, ws), dirNames(t, old), before)
	}
	if !strings.Contains(err.Error(), "without --workspace") {
		t.Fatalf("resume elsewhere: %v", err)
	}
	if _, serr := os.Stat(ws); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("the refused resume made %s", ws)
	}
	if got := dirNames(t, old); strings.Join(got, " ") != strings.Join(before, " ") {
		t.Fatalf("the refused resume changed the workspace: %q, was %q", got, before)
	}
	if rec, _ := store.Read("lead"); !rec.Interrupted() || rec.State.Definition.Workspace != old {
		t.Fatalf("the refused resume changed the parent: interrupted %t, workspace %s", rec.Interrupted(), rec.State.Definition.Workspace)
	}
	if res, _ := resume(t, eng, "lead", StrategySeal); res.Status != StatusDone {
		t.Fatalf("resume where it ran: %+v", res)
	}
	for _, name := range []string{"alpha", "beta"} {
		if got := readFile(t, old, name+".txt"); got != name {
			t.Fatalf("%s.txt = %q", name, got)
		}
	}
}

// dirNames lists the names in dir, none when it is missing.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Regression: a sub-agent stopped with its tree, resumed by itself with
// --workspace in another directory, went on there while its parent and
// siblings stayed in theirs: the tree's files were split, and the parent
// took its answer for work done in its workspace. A sub-agent works in
// its parent's workspace; such a resume is refused, nothing changed.
func TestResumeElsewhereOfASubAgentAloneDoesNotSplitTheTree(t *testing.T) {
	eng, store, af := stoppedTree(t)
	kids, err := Children(t.Context(), store, "lead")
	if err != nil || len(kids) != 2 {
		t.Fatalf("children: %+v, %v", kids, err)
	}
	ws := filepath.Join(t.TempDir(), "elsewhere")
	for _, k := range kids {
		before, _ := store.Read(k.ID)
		res, err := eng.Resume(context.Background(), ResumeOptions{ID: k.ID, Workspace: ws})
		if err == nil {
			t.Fatalf("resume %s elsewhere: %+v; its workspace holds %q, its parent's %q", k.ID, res, dirNames(t, ws), dirNames(t, af.WorkspaceDir()))
		}
		if !strings.Contains(err.Error(), "its parent's workspace") || !strings.Contains(err.Error(), "without --workspace") {
			t.Fatalf("resume %s elsewhere: %v", k.ID, err)
		}
		after, _ := store.Read(k.ID)
		if after.State.Definition.Workspace != before.State.Definition.Workspace || after.Interrupted() != before.Interrupted() {
			t.Fatalf("the refused resume changed %s", k.ID)
		}
	}
	if _, serr := os.Stat(ws); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("the refused resume made %s", ws)
	}
	if res, _ := resume(t, eng, "lead", StrategySeal); res.Status != StatusDone {
		t.Fatalf("resume the tree: %+v", res)
	}
	for _, name := range []string{"alpha", "beta"} {
		if got := readFile(t, af.WorkspaceDir(), name+".txt"); got != name {
			t.Fatalf("%s.txt = %q", name, got)
		}
	}
}
