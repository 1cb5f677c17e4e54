package workflow_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: a workflow's driver whose lease another process took over
// (it was stopped past its lease, and `cairn workflow resume` elsewhere
// finished the workflow) wrote its stale record over the newer one when
// it went on: PutWorkflow was not fenced. Now the record's write is fenced
// on the workflow's lease as an agent's writes are: the driver writes
// nothing more, starts no step, and ends with an error that says it was
// taken over, naming the new holder, and matches checkpoint.ErrLocked.
//
// A directory store needs no fence: the driver's flock of the workflow's
// id cannot be taken from it while it lives, so no other process can
// write the record meanwhile (the second subtest).
func TestTakenOverWorkflowDriverWritesNoRecord(t *testing.T) {
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.Start(t).NewDatabase(t)
		a, err := pgstore.Open(context.Background(), url)
		must(t, err)
		defer a.Close()
		b, err := pgstore.Open(context.Background(), url)
		must(t, err)
		defer b.Close()
		nodeB := checkpoint.Holder{PID: 4242, Host: "node-b", Run: "run-on-b", Started: time.Now().UTC()}
		var once sync.Once
		var newer *checkpoint.Workflow
		var lock checkpoint.Lock
		var started []string
		_, err = workflow.Run(context.Background(), engine(t, a), f, workflow.Options{ID: "wf", Workspace: workspace(t),
			OnStep: func(ev workflow.StepEvent) {
				if ev.Type == "start" {
					started = append(started, ev.Step)
				}
				if ev.Type != "done" {
					return
				}
				once.Do(func() { // node B takes the workflow over and finishes it
					var err error
					lock, err = b.Steal("wf", nodeB)
					must(t, err)
					newer, err = b.Workflow("wf")
					must(t, err)
					newer.Status, newer.Reason, newer.Updated = checkpoint.StatusDone, "", time.Now().UTC().Add(time.Hour)
					must(t, b.PutWorkflow(newer))
				})
			}})
		if !errors.Is(err, pgstore.ErrFenced) || !errors.Is(err, checkpoint.ErrLocked) ||
			!strings.Contains(err.Error(), `workflow "wf" was taken over by process 4242 on node-b`) {
			t.Fatalf("the taken-over driver: %v; want it fenced, naming the new holder", err)
		}
		defer lock.Unlock()
		got, err := b.Workflow("wf")
		must(t, err)
		if !reflect.DeepEqual(got, newer) {
			t.Fatalf("the taken-over driver wrote the record:\n%+v\nwant the newer one\n%+v", got, newer)
		}
		// The first write after the take-over ended the run: the steps it
		// started then were the two that were ready at once.
		if len(started) > 3 {
			t.Fatalf("the taken-over driver went on starting steps: %v", started)
		}
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		store, err := checkpoint.OpenFileStore(dir)
		must(t, err)
		other, err := checkpoint.OpenFileStore(dir) // another process, as far as the lock goes
		must(t, err)
		var tried error
		res, err := workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: "wf", Workspace: workspace(t),
			OnStep: func(ev workflow.StepEvent) {
				if ev.Type == "done" && tried == nil {
					lock, err := other.Lock("wf", checkpoint.ThisProcess("other"))
					if err == nil {
						lock.Unlock()
						t.Error("another process took the lock of a running workflow")
					}
					tried = err
				}
			}})
		must(t, err)
		if !errors.Is(tried, checkpoint.ErrLocked) || res.Status != checkpoint.StatusDone {
			t.Fatalf("another process's lock: %v; the run: %s (%s)", tried, res.Status, res.Reason)
		}
	})
}
