package checkpoint

import (
	"errors"
	"fmt"
	"hash/crc32"
	"time"
)

// WorkflowSchemaVersion is the version of the Workflow record this package
// writes. A reader refuses anything newer, and reads versions 1 and 2 too.
//
// A record of version 3 (or 2) is a CBOR map of three keys:
//
//	1   3 (or 2), the version
//	12  the record: the Workflow, CBOR-encoded (its Schema the same), as a byte string
//	13  the CRC-32C (Castagnoli) of the bytes of key 12
//
// so that a byte changed anywhere in the record, even one that leaves it a
// valid record (a digit of a step's output), is found when it is read. A
// record of version 1 is the Workflow itself, key 1 its Schema, with no
// checksum: it is read as before, and what still decodes is taken as it
// is. Version 3 added Begun (key 13 of the Workflow): a cairn that wrote
// version 2 would not know that a step whose agent is gone had begun, and
// would make it again, so it refuses a record of version 3 as newer. A
// record of version 1 or 2 is read with no step begun, as its cairn kept
// none, and is written back as version 3 the next time it is written.
const WorkflowSchemaVersion = 3

// workflowFile is a record of version 2 or 3 as it is kept: the encoded
// Workflow and its checksum.
type workflowFile struct {
	Schema int    `cbor:"1,keyasint"`
	Record []byte `cbor:"12,keyasint"`
	Sum    uint32 `cbor:"13,keyasint"`
}

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
	// Run tells this run of the workflow from the others that have had its
	// id: made when the run starts, kept by every resume. Each step's
	// agent carries it (package host/workflow puts it in the agent's
	// correlation label), so that an agent an earlier run under the same
	// id left is known not to be this run's. Empty in a record that a
	// cairn writing version 1 started.
	Run string `cbor:"12,keyasint,omitempty"`
	// Begun are the steps whose agent a run of the workflow made, in the
	// order they began: each is added, and the record made durable, once
	// the step's agent is made and before anything of it runs, so that a
	// step whose agent's stored state is gone later (removed, or moved
	// aside) is known to have begun, and what it changed to be unknown,
	// rather than taken for a step that never started and made again.
	// Empty in a record of version 1 or 2.
	Begun []string `cbor:"13,keyasint,omitempty"`
	// File is the path of the workflow file the run started from, so that
	// a resume can say the file changed since (the run goes on with Flow).
	// Empty in a record a cairn that did not keep it wrote, and for a
	// workflow not started from a file; a cairn that does not know the
	// key leaves it out, which costs only that notice.
	File string `cbor:"14,keyasint,omitempty"`
}

// HasBegun reports whether the step of that name is among Begun.
func (w *Workflow) HasBegun(name string) bool {
	for _, b := range w.Begun {
		if b == name {
			return true
		}
	}
	return false
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
	// *FutureSchemaError for a record of a newer schema, a
	// *WorkflowCorruptError (matching ErrCorrupt) for one that does not
	// decode, does not match its checksum or holds another workflow.
	Workflow(id string) (*Workflow, error)
	// WorkflowIDs lists the workflows, sorted.
	WorkflowIDs() ([]string, error)
}

var (
	_ Workflows = (*FileStore)(nil)
	_ Workflows = (*MemStore)(nil)
)

// EncodeWorkflow encodes a workflow record as version 3, with its
// checksum, refusing one without a valid id or of a schema this build
// does not write.
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
	rec, err := encMode.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode workflow %s: %w", w.ID, err)
	}
	return encMode.Marshal(workflowFile{Schema: WorkflowSchemaVersion, Record: rec, Sum: crc32.Checksum(rec, castagnoli)})
}

// DecodeWorkflow decodes a record kept by EncodeWorkflow (or by a cairn
// that wrote version 1) as the record of workflow id: where names it in
// errors (its file, or its row). The record it returns has this build's
// Schema, so that it is written back as this build writes.
//
// # Errors
//
// A record of a newer schema is a *FutureSchemaError. One that does not
// decode, whose checksum does not match its bytes, or that holds another
// workflow than id (a record copied or renamed) is a
// *WorkflowCorruptError, which matches ErrCorrupt.
func DecodeWorkflow(where, id string, data []byte) (*Workflow, error) {
	var head struct {
		Schema int `cbor:"1,keyasint"`
	}
	if err := decMode.Unmarshal(data, &head); err != nil {
		return nil, workflowDamage(where, id, "does not decode: "+err.Error())
	}
	var w *Workflow
	var err error
	switch head.Schema {
	case 1:
		w, err = decodeWorkflowRecord(where, id, 1, data)
	case 2, 3:
		w, err = decodeWorkflowFile(where, id, head.Schema, data)
	default:
		if head.Schema > WorkflowSchemaVersion {
			return nil, &FutureSchemaError{File: where, Version: head.Schema, Supported: WorkflowSchemaVersion}
		}
		return nil, workflowDamage(where, id, fmt.Sprintf("has schema version %d, which no cairn writes", head.Schema))
	}
	if err != nil {
		return nil, err
	}
	if w.ID != id {
		return nil, &WorkflowCorruptError{ID: id, Where: where, Holds: w.ID,
			Reason: fmt.Sprintf("holds workflow %q, not %q: a workflow's record is read only under its own id, and this one was copied or renamed", w.ID, id)}
	}
	w.Schema = WorkflowSchemaVersion
	return w, nil
}

// decodeWorkflowFile decodes a record of version v, 2 or 3: its checksum,
// then the record it holds, which must be of the same version.
func decodeWorkflowFile(where, id string, v int, data []byte) (*Workflow, error) {
	var f workflowFile
	if err := decMode.Unmarshal(data, &f); err != nil {
		return nil, workflowDamage(where, id, "does not decode: "+err.Error())
	}
	if sum := crc32.Checksum(f.Record, castagnoli); sum != f.Sum {
		return nil, workflowDamage(where, id, fmt.Sprintf("does not match its checksum (CRC-32C %08x recorded, %08x of its bytes): "+
			"it changed after it was written", f.Sum, sum))
	}
	return decodeWorkflowRecord(where, id, v, f.Record)
}

// decodeWorkflowRecord decodes an encoded Workflow of schema version v.
func decodeWorkflowRecord(where, id string, v int, data []byte) (*Workflow, error) {
	var w Workflow
	if err := decMode.Unmarshal(data, &w); err != nil {
		return nil, workflowDamage(where, id, "does not decode: "+err.Error())
	}
	if w.Schema != v || CheckID(w.ID) != nil {
		return nil, workflowDamage(where, id, fmt.Sprintf("is not valid: schema %d in a record of version %d, id %q", w.Schema, v, w.ID))
	}
	return &w, nil
}

// WorkflowCorruptError is a workflow record that is refused: it does not
// decode, its checksum does not match its bytes, or it holds another
// workflow than the one it was read as. Nothing was changed.
// errors.Is(err, ErrCorrupt) holds, and errors.As finds a *CorruptError
// of the same file and reason.
type WorkflowCorruptError struct {
	// ID is the workflow the record was read as; Where is the record, its
	// file or its row.
	ID, Where string
	// Holds is the workflow the record holds, when that is not ID.
	Holds  string
	Reason string
	// Fix says what to do: the store that read the record says it in its
	// own terms (a file to restore or move aside, a row to delete).
	Fix string
}

// workflowDamage is the error of a record of workflow id whose bytes are
// damaged.
func workflowDamage(where, id, reason string) *WorkflowCorruptError {
	return &WorkflowCorruptError{ID: id, Where: where, Reason: reason}
}

func (e *WorkflowCorruptError) Error() string {
	fix := e.Fix
	if fix == "" {
		fix = "restore the record from a backup, or move the workflow's record aside to give workflow " + e.ID + " up"
	}
	return fmt.Sprintf("workflow record %s %s; nothing was changed — %s", e.Where, e.Reason, fix)
}

// Unwrap is the *CorruptError of the record.
func (e *WorkflowCorruptError) Unwrap() error { return &CorruptError{File: e.Where, Reason: e.Reason} }
