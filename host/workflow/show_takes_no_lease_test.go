package workflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: Show and List (`cairn workflow show`, `ls`) took the lease
// of a workflow whose record says running, to learn whether a process
// runs it, and so raised its epoch in PostgreSQL: a command that only
// reads took a lease. They ask whether it is held instead, and still say
// interrupted when no one holds it and running when a process does.
func TestWorkflowShowTakesNoLease(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	s, err := pgstore.Open(context.Background(), url)
	must(t, err)
	defer s.Close()
	t0 := time.Unix(1, 0).UTC()
	must(t, s.PutWorkflow(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "wf", Name: "f",
		Started: t0, Updated: t0, Status: checkpoint.StatusRunning}))
	status := func() (checkpoint.Status, checkpoint.Status) {
		shown, err := workflow.Show(s, "wf")
		must(t, err)
		recs, _, err := workflow.List(s)
		must(t, err)
		return shown.Status, recs[0].Status
	}
	if shown, listed := status(); shown != workflow.StatusInterrupted || listed != workflow.StatusInterrupted {
		t.Fatalf("no process holds it: shown %s, listed %s", shown, listed)
	}
	if l, _, err := s.Running("wf"); err != nil || l.Epoch != 0 {
		t.Fatalf("after show and ls, the workflow's lease is at epoch %d (%v); want none taken", l.Epoch, err)
	}
	other, err := pgstore.Open(context.Background(), url)
	must(t, err)
	defer other.Close()
	lock, err := other.Lock("wf", checkpoint.Holder{PID: 4242, Host: "node-b", Run: "driver", Started: time.Now()})
	must(t, err)
	defer lock.Unlock()
	taken, _, err := s.Running("wf")
	must(t, err)
	if shown, listed := status(); shown != checkpoint.StatusRunning || listed != checkpoint.StatusRunning {
		t.Fatalf("a process holds it: shown %s, listed %s", shown, listed)
	}
	if l, _, err := s.Running("wf"); err != nil || l.Epoch != taken.Epoch || l.Holder.Run != "driver" {
		t.Fatalf("the driver's lease is at epoch %d, held by run %q (%v); want epoch %d of run driver, as it took it",
			l.Epoch, l.Holder.Run, err, taken.Epoch)
	}
}
