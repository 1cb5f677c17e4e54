package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a parent made anew at an id whose earlier agent was moved
// aside (as `cairn workflow resume --retry` makes a gone step's agent)
// found that agent's child at its first delegation's id, with the same
// lineage, and took the child's answer for its own delegation's, though
// it had handed the child another task: the model read the answer to a
// task it never gave. A child whose task is not the delegation's is not
// the one this delegation made: the run is refused, naming it, and the
// child is left as it was.
func TestDelegateRefusesAChildMadeForAnotherTask(t *testing.T) {
	eng, store := fileEngine(t)
	af := editTeam(t)
	if res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	if err := os.Rename(filepath.Join(store.(interface{ Dir() string }).Dir(), "agents", "lead"), filepath.Join(t.TempDir(), "lead")); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(af.Dir, "script.yaml"), []byte(strings.Replace(editScript, "append to log.txt", "count the lines of log.txt", 1)), 0o644))
	again, err := ParseAgentFile([]byte(editAgent), af.Dir)
	must(t, err)
	res, err := eng.Run(context.Background(), RunOptions{Agent: again, ID: "lead", Prompt: "go"})
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	rec, err := store.Read("lead")
	must(t, err)
	for _, got := range toolTexts(rec.State) {
		if strings.Contains(got, "kid done") {
			t.Fatalf("the delegation of another task got the earlier child's answer: %q (run %+v)", got, res)
		}
	}
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "is not the sub-agent this delegation made") {
		t.Fatalf("second run: %+v; want it refused, naming the child made for another task", res)
	}
	id, dir := kidDir(store)
	if kid, err := store.Read(id); err != nil || kid.State.Round != 4 {
		t.Fatalf("the earlier child was not left as it was: %v", err)
	}
	// As the refusal says: once it is out of the store, the resume hands
	// this task to a sub-agent made anew.
	must(t, os.Rename(dir, filepath.Join(t.TempDir(), "kid")))
	res, _ = resume(t, eng, "lead", StrategySeal)
	kid, err := store.Read(id)
	if res.Status != StatusDone || err != nil {
		t.Fatalf("resume once the earlier child is out: %+v, %v", res, err)
	}
	if task, _ := taskOf(kid); task != "count the lines of log.txt" {
		t.Fatalf("the sub-agent made anew has the task %q", task)
	}
}

// Regression: a parent made anew at an id whose earlier agent was moved
// aside found that agent's child, made for the same task, at its first
// delegation's id, and took the child's answer for its own delegation's:
// the child did not run, and what it had changed was the earlier agent's.
// A child made before the parent's first run started, which no mark of
// this delegation says it began, is not the one this delegation made.
func TestDelegateRefusesAnEarlierParentsChild(t *testing.T) {
	eng, store := fileEngine(t)
	af := editTeam(t)
	if res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	if err := os.Rename(filepath.Join(store.(interface{ Dir() string }).Dir(), "agents", "lead"), filepath.Join(t.TempDir(), "lead")); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if n := edits(t, af); res.Status != StatusFailed || !strings.Contains(res.Reason, "is not the sub-agent this delegation made") || n != 1 {
		t.Fatalf("second run: %+v, the kid's edit %d times; want it refused, naming the earlier agent's child", res, n)
	}
	id, dir := kidDir(store)
	must(t, os.Rename(dir, filepath.Join(t.TempDir(), "kid")))
	res, _ = resume(t, eng, "lead", StrategySeal)
	if _, err := store.Read(id); res.Status != StatusDone || err != nil || edits(t, af) != 2 {
		t.Fatalf("resume once the earlier child is out: %+v, %v; the kid's edit %d times, want the kid made anew", res, err, edits(t, af))
	}
}
