package pgstore_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Regression: a workflow's lease row deleted under its driver (by hand, to
// revoke the lease, or by a restore that left cairn_leases out) was made
// again by the next take from epoch 0, as an agent's once was, giving the
// second driver the epoch the first still held: both wrote the workflow's
// record, each over the other's. So was a lease row deleted before its
// holder's first write, of a workflow or an agent, which no row of theirs
// yet named. Every lease row made again starts past every epoch the
// database has given, so the first driver is fenced and the record stays
// the second's.
func TestWorkflowLeaseRowDeletedUnderDriverFencesIt(t *testing.T) {
	for _, c := range []struct {
		name  string
		first bool // the first driver wrote its record before the row was deleted
	}{{"after its record", true}, {"before its record", false}} {
		t.Run(c.name, func(t *testing.T) {
			url := sharedURL(t)
			a := open(t, url)
			lockA, err := a.Lock("wf1", checkpoint.ThisProcess("run-a"))
			must(t, err)
			defer lockA.Unlock()
			if c.first {
				must(t, a.PutWorkflow(workflowRecord("wf1", "run-a", 1)))
			}
			pgstore.Pause(lockA)
			execSQL(t, url, `DELETE FROM cairn_leases WHERE agent = 'wf1'`)

			b := open(t, url)
			lockB, err := b.Lock("wf1", checkpoint.ThisProcess("run-b"))
			must(t, err)
			defer lockB.Unlock()
			must(t, b.PutWorkflow(workflowRecord("wf1", "run-b", 2)))

			err = a.PutWorkflow(workflowRecord("wf1", "run-a", 3))
			if !errors.Is(err, pgstore.ErrFenced) {
				t.Fatalf("the first driver's write after its lease row was deleted and taken again: %v, want it fenced", err)
			}
			w, err := open(t, url).Workflow("wf1")
			must(t, err)
			if w.Run != "run-b" || len(w.Steps) != 2 {
				t.Fatalf("workflow wf1 of run %q with %d steps; want run-b's record, 2 steps", w.Run, len(w.Steps))
			}
		})
	}
}

// Regression: an agent's lease row deleted after its holder took it and
// before it made the agent was made again at epoch 0, the agent having no
// row yet to say it had a holder; the next taker got epoch 1, the first
// holder's, and the first holder's create passed the fence.
func TestLeaseRowDeletedBeforeCreateFencesHolder(t *testing.T) {
	url := sharedURL(t)
	a := open(t, url)
	lockA, err := a.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lockA.Unlock()
	pgstore.Pause(lockA)
	execSQL(t, url, `DELETE FROM cairn_leases WHERE agent = 'a1'`)

	b := open(t, url)
	lockB, err := b.Lock("a1", checkpoint.ThisProcess("run-b"))
	must(t, err)
	defer lockB.Unlock()
	if _, err := a.Create("a1", newState("a1")); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("the first holder's create after its lease row was deleted and taken again: %v, want it fenced", err)
	}
	logB, err := b.Create("a1", newState("a1"))
	must(t, err)
	commitRound(t, logB, 1)
}

// workflowRecord is a record of workflow id in run with steps steps.
func workflowRecord(id, run string, steps int) *checkpoint.Workflow {
	w := &checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: id, Name: "pay", Run: run, Started: t0, Updated: t0,
		Status: checkpoint.StatusRunning}
	for i := 0; i < steps; i++ {
		w.Steps = append(w.Steps, checkpoint.WorkflowStep{Name: fmt.Sprintf("s%d", i), Output: run, Started: t0, Finished: t0})
	}
	return w
}
