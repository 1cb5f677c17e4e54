package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// errStopBeforeApplied stands for a process that died after a call's
// changes were applied and before the record saying so was journaled.
var errStopBeforeApplied = errors.New("stopped before the applied record")

// stopBeforeAppliedStore is a file store whose new agents' journals take
// no applied record.
type stopBeforeAppliedStore struct{ *checkpoint.FileStore }

func (s stopBeforeAppliedStore) Create(id string, st *checkpoint.State) (checkpoint.Log, error) {
	log, err := s.FileStore.Create(id, st)
	if err != nil {
		return nil, err
	}
	return stopBeforeAppliedLog{log}, nil
}

type stopBeforeAppliedLog struct{ checkpoint.Log }

func (l stopBeforeAppliedLog) Append(recs ...checkpoint.Record) error {
	for _, r := range recs {
		if r.Type == checkpoint.RecApplied {
			return errStopBeforeApplied
		}
	}
	return l.Log.Append(recs...)
}

// Regression: a stop between a call's apply and its applied record left
// the workspace holding the call's change, which the store's copy (the
// boundary's, with the changes recorded applied) did not: `cairn resume
// --workspace DIR` with DIR the agent's own workspace refused it as
// differing ("at round 0 in 1 path: notes.txt (content)"), where a plain
// resume finished. A path that holds what a settled call made of it is no
// difference: the resume applies the call's changes, already there.
func TestResumeInItsOwnWorkspaceAfterAStopBeforeTheAppliedRecord(t *testing.T) {
	dir := t.TempDir()
	fs, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: stopBeforeAppliedStore{fs}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	af := agentIn(t, "name: w\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n", `
turns:
  - tool_calls: [{name: write_file, input: {path: notes.txt, content: one}}, {name: write_file, input: {path: sub/more.txt, content: two}}]
  - text: done
`)
	ws := af.WorkspaceDir()
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "w", Prompt: "write"})
	if err == nil && res.Status != StatusFailed {
		t.Fatalf("run: %+v; want it stopped at the applied record", res)
	}
	if got := readFile(t, ws, "notes.txt"); got != "one" {
		t.Fatalf("notes.txt = %q after the stop, want the call's change applied", got)
	}
	eng2, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer eng2.Close(context.Background())
	res, err = eng2.Resume(context.Background(), ResumeOptions{ID: "w", Workspace: ws})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("resume --workspace of its own workspace: %+v, %v", res, err)
	}
	if got := readFile(t, ws, "notes.txt") + readFile(t, ws, "sub/more.txt"); got != "onetwo" {
		t.Fatalf("the workspace after resume holds %q, want each change once", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "sub")); err != nil {
		t.Fatal(err)
	}
}
