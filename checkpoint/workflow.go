package checkpoint

import (
	"errors"
	"fmt"
	"time"
)

// WorkflowSchemaVersion is the version of the Workflow record this package
// writes. A reader refuses anything newer.
const WorkflowSchemaVersion = 1

// Workflow is the journal of one workflow run: which steps have completed
// and what each one answered. It is replaced as a whole, durably, each time
// a step completes; a resume skips the steps it lists and dispatches the
// rest. It is the step-boundary analogue of an agent's round boundary.
type Workflow struct {
	Schema int    `cbor:"1,keyasint"`
	ID     string `cbor:"2,keyasint"`
	// Name is the workflow file's name: field.
	Name string `cbor:"3,keyasint"`
	// Flow is the workflow file as it was when the run started; Dir is
	// the directory its relative paths are resolved against.
	Flow []byte `cbor:"4,keyasint"`
	Dir  string `cbor:"5,keyasint"`
	// Steps are the completed steps, in the order they completed.
	Steps   []WorkflowStep `cbor:"6,keyasint,omitempty"`
	Started time.Time      `cbor:"7,keyasint"`
	// Updated is when the record was last written: its checkpoint time.
	Updated time.Time `cbor:"8,keyasint"`
	Status  Status    `cbor:"9,keyasint"`
	// Reason says why a workflow paused or failed.
	Reason string `cbor:"10,keyasint,omitempty"`
	// Workspace is the directory every step works in, unless a step names
	// its own.
	Workspace string `cbor:"11,keyasint,omitempty"`
}

// WorkflowStep is one completed step.
type WorkflowStep struct {
	Name string `cbor:"1,keyasint"`
	// Agent is the durable agent that ran the step, if it ran one.
	Agent    string    `cbor:"2,keyasint,omitempty"`
	Output   string    `cbor:"3,keyasint"`
	Started  time.Time `cbor:"4,keyasint"`
	Finished time.Time `cbor:"5,keyasint"`
}

// Step returns the completed step of that name.
func (w *Workflow) Step(name string) (WorkflowStep, bool) {
	for _, s := range w.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return WorkflowStep{}, false
}

// Workflows keeps workflow journals. FileStore, MemStore and pgstore
// implement it; a Store that keeps no workflows does not.
type Workflows interface {
	// PutWorkflow replaces the workflow's record; it is durable when
	// PutWorkflow returns. One process writes a workflow at a time (the
	// caller holds the store's lock of the workflow's id).
	PutWorkflow(w *Workflow) error
	// Workflow reads a workflow's record: ErrNotFound for an unknown id, a
	// *FutureSchemaError for a record of a newer schema, a *CorruptError
	// for one that cannot be decoded.
	Workflow(id string) (*Workflow, error)
	// WorkflowIDs lists the workflows, sorted.
	WorkflowIDs() ([]string, error)
}

var (
	_ Workflows = (*FileStore)(nil)
	_ Workflows = (*MemStore)(nil)
)

// EncodeWorkflow encodes a workflow record, refusing one without a valid
// id or of a schema this build does not write.
func EncodeWorkflow(w *Workflow) ([]byte, error) {
	if w == nil {
		return nil, errors.New("encode workflow: nil record")
	}
	if err := CheckID(w.ID); err != nil {
		return nil, fmt.Errorf("encode workflow: %w", err)
	}
	if w.Schema != WorkflowSchemaVersion {
		return nil, fmt.Errorf("encode workflow %s: schema %d, this cairn writes %d", w.ID, w.Schema, WorkflowSchemaVersion)
	}
	return encMode.Marshal(w)
}

// DecodeWorkflow decodes a record kept by EncodeWorkflow; where names it
// in errors. A record of a newer schema is a *FutureSchemaError; damage is
// a *CorruptError.
func DecodeWorkflow(where string, data []byte) (*Workflow, error) {
	var w Workflow
	if err := decMode.Unmarshal(data, &w); err != nil {
		return nil, &CorruptError{File: where, Reason: "workflow: " + err.Error()}
	}
	if w.Schema > WorkflowSchemaVersion {
		return nil, &FutureSchemaError{File: where, Version: w.Schema, Supported: WorkflowSchemaVersion}
	}
	if w.Schema < 1 || CheckID(w.ID) != nil {
		return nil, &CorruptError{File: where, Reason: fmt.Sprintf("workflow: schema %d, id %q", w.Schema, w.ID)}
	}
	return &w, nil
}
