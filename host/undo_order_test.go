package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Regression: a round's kept changes were listed, and undone, in the
// order of their calls' ids as file names, where call_1_10 comes before
// call_1_2 (and a provider's ids in no order at all). Undo must take the
// changes back in the reverse of the order they were applied in: here
// call 2 makes directory d, and call 10 writes into it; undone the wrong
// way round, d was to go while it still held call 10's file. The diff
// lists the calls in the order the model asked for them.
func TestUndoTakesARoundBackInTheReverseOfItsCalls(t *testing.T) {
	var calls []string
	for i := range 11 {
		path := fmt.Sprintf("f%d.txt", i)
		switch i {
		case 2:
			path = "d/x.txt"
		case 10:
			path = "d/y.txt"
		}
		calls = append(calls, fmt.Sprintf("{name: write_file, input: {path: %s, content: c%d}}", path, i))
	}
	af := agentIn(t, poolAgent, "turns:\n  - tool_calls: ["+strings.Join(calls, ", ")+"]\n  - text: done\n")
	eng, _ := fileEngine(t)
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "eleven", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	ws := af.WorkspaceDir()
	if got := readFile(t, ws, "d/y.txt"); got != "c10" {
		t.Fatalf("d/y.txt holds %q after the round", got)
	}

	_, changes, err := eng.Changes(t.Context(), "eleven", 0)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range changes {
		if len(order) == 0 || order[len(order)-1] != c.Call {
			order = append(order, c.Call)
		}
	}
	for i, c := range order {
		if want := fmt.Sprintf("call_1_%d", i); c != want {
			t.Errorf("the diff lists the calls %v, want call_1_0 to call_1_10 in the order they were asked for", order)
			break
		}
	}

	u, err := eng.Undo(t.Context(), "eleven")
	if err != nil {
		t.Fatalf("undo: %+v, %v", u, err)
	}
	if len(u.Conflicts) != 0 {
		t.Errorf("undo found conflicts %v in a workspace nothing else changed", u.Conflicts)
	}
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the workspace after undoing the only round that changed it holds %v, want nothing", names)
	}
	if _, err := os.Stat(filepath.Join(ws, "d")); err == nil {
		t.Error("directory d, which the round made, is still there")
	}
}

// Regression: a round made directory d and wrote d/c.txt; c.txt changed
// after it. Undo left c.txt, as a path changed since, then failed to
// remove d ("directory not empty") and stopped half done, a.txt never
// taken back, and every undo after it failed the same way. The directory
// is left as c.txt is, and the rest of the round is taken back.
func TestUndoLeavesADirectoryThatHoldsAChangedFile(t *testing.T) {
	af := agentIn(t, poolAgent, `turns:
  - tool_calls: [{name: write_file, input: {path: a.txt, content: a}}, {name: write_file, input: {path: d/c.txt, content: c}}]
  - text: done
`)
	eng, _ := fileEngine(t)
	if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "dir", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	ws := af.WorkspaceDir()
	must(t, os.WriteFile(filepath.Join(ws, "d", "c.txt"), []byte("someone else's"), 0o644))
	u, err := eng.Undo(t.Context(), "dir")
	if err != nil {
		t.Fatalf("undo: %+v, %v", u, err)
	}
	if !slices.Contains(u.Restored, "a.txt") || !slices.Contains(u.Conflicts, "d/c.txt") || !slices.Contains(u.Conflicts, "d") {
		t.Errorf("undo restored %v and left %v; want a.txt restored, d/c.txt and d left", u.Restored, u.Conflicts)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a.txt, which the round made, is still there: %v", err)
	}
	if got := readFile(t, ws, "d/c.txt"); got != "someone else's" {
		t.Errorf("d/c.txt, changed after the round, holds %q", got)
	}
	if _, err := eng.Undo(t.Context(), "dir"); !errors.Is(err, ErrNoChanges) {
		t.Errorf("a second undo: %v, want ErrNoChanges (the round was taken back)", err)
	}
}
