package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// A workflow record is stored, read back as it was, replaced as a whole,
// and listed; an unknown id is ErrNotFound; a record this build would not
// write is refused before anything is stored. A store that keeps no
// workflows (no checkpoint.Workflows) skips this test.
func testWorkflows(t *testing.T, s checkpoint.Store) {
	ws, ok := s.(checkpoint.Workflows)
	if !ok {
		t.Skip("the store keeps no workflows")
	}
	ids, err := ws.WorkflowIDs()
	must(t, err)
	if len(ids) != 0 {
		t.Fatalf("a new store lists workflows %v", ids)
	}
	w := &checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "wf-b", Name: "flow",
		Flow: []byte("name: flow\n"), Dir: "/flows", Started: t0, Updated: t0, Status: checkpoint.StatusRunning}
	must(t, ws.PutWorkflow(w))
	w.Steps = append(w.Steps, checkpoint.WorkflowStep{Name: "fetch", Agent: "wf-b.fetch", Output: "out", Started: t0, Finished: t0.Add(time.Second)})
	w.Updated = t0.Add(time.Second)
	must(t, ws.PutWorkflow(w))
	must(t, ws.PutWorkflow(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "wf-a", Started: t0, Updated: t0}))
	got, err := ws.Workflow("wf-b")
	must(t, err)
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, w)
	}
	ids, err = ws.WorkflowIDs()
	must(t, err)
	if !reflect.DeepEqual(ids, []string{"wf-a", "wf-b"}) {
		t.Fatalf("WorkflowIDs = %v, want [wf-a wf-b]", ids)
	}
	_, err = ws.Workflow("nobody")
	wantErr(t, "Workflow of an unknown id", err, checkpoint.ErrNotFound)
	if err := ws.PutWorkflow(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion + 1, ID: "wf-c"}); err == nil {
		t.Fatal("a record of a newer schema was stored")
	}
	if err := ws.PutWorkflow(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "../x"}); err == nil {
		t.Fatal("a record with a bad id was stored")
	}
	if _, err := ws.Workflow("wf-c"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("the refused record is there: %v", err)
	}
}

// Facts are stored per namespace and key, a second write of a key
// replaces the first (so a write applied twice is stored once), namespaces
// do not see each other's facts, and a forgotten fact is gone. A store
// that keeps no memory (no checkpoint.Memory) skips this test.
func testMemory(t *testing.T, s checkpoint.Store) {
	m, ok := s.(checkpoint.Memory)
	if !ok {
		t.Skip("the store keeps no memory")
	}
	facts, err := m.Recall("notes")
	must(t, err)
	if len(facts) != 0 {
		t.Fatalf("a new store recalls %v", facts)
	}
	f := checkpoint.Fact{Key: "build", Text: "make all", Agent: "a1", Round: 2, Call: "call_2_0", Time: t0}
	must(t, m.Remember("notes", f))
	must(t, m.Remember("notes", f))
	must(t, m.Remember("notes", checkpoint.Fact{Key: "arch", Text: "amd64", Agent: "a2", Round: 1, Time: t0}))
	must(t, m.Remember("other", checkpoint.Fact{Key: "build", Text: "go build", Time: t0}))
	facts, err = m.Recall("notes")
	must(t, err)
	if len(facts) != 2 || facts[0].Key != "arch" || !reflect.DeepEqual(facts[1], f) {
		t.Fatalf("Recall(notes) = %+v", facts)
	}
	f.Text = "make test"
	must(t, m.Remember("notes", f))
	facts, err = m.Recall("notes")
	must(t, err)
	if len(facts) != 2 || facts[1].Text != "make test" {
		t.Fatalf("a second write of a key did not replace the first: %+v", facts)
	}
	ns, err := m.Namespaces()
	must(t, err)
	if !reflect.DeepEqual(ns, []string{"notes", "other"}) {
		t.Fatalf("Namespaces = %v", ns)
	}
	must(t, m.Forget("notes", "build"))
	wantErr(t, "Forget of a forgotten fact", m.Forget("notes", "build"), checkpoint.ErrNotFound)
	facts, err = m.Recall("notes")
	must(t, err)
	if len(facts) != 1 || facts[0].Key != "arch" {
		t.Fatalf("after Forget: %+v", facts)
	}
	if err := m.Remember("../x", f); err == nil {
		t.Fatal("a bad namespace was accepted")
	}
	if err := m.Remember("notes", checkpoint.Fact{Key: ""}); err == nil {
		t.Fatal("an empty key was accepted")
	}
}
