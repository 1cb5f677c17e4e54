package checkpoint

import (
	"bytes"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// putWorkflowFile stores a record of workflow id whose one step answered
// output, and returns the store and the record's file.
func putWorkflowFile(t *testing.T, id, output string) (*FileStore, string) {
	t.Helper()
	s, err := OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1, 0).UTC()
	w := &Workflow{Schema: WorkflowSchemaVersion, ID: id, Name: "pay", Flow: []byte("name: pay\n"), Started: t0, Updated: t0,
		Status: StatusRunning, Run: "3f9a1c2b4d5e", Steps: []WorkflowStep{{Name: "quote", Agent: id + ".quote", Output: output, Started: t0, Finished: t0}}}
	if err := s.PutWorkflow(w); err != nil {
		t.Fatal(err)
	}
	return s, filepath.Join(s.Dir(), workflowDir, id+".cbor")
}

// Regression: a byte changed in a workflow record ("100 EUR" to "900 EUR"
// in a step's output) was read as if it were the record, and resume fed
// the changed output to later steps. The record's checksum finds it: the
// read is refused naming the file, what is wrong with it and what to do
// with the workflow's record (not "move the agent aside"), and the file
// is left as it was.
func TestWorkflowRecordFlippedByteRefused(t *testing.T) {
	s, path := putWorkflowFile(t, "wa", "100 EUR")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(data, []byte("100 EUR")) != 1 {
		t.Fatalf("the record does not hold the output once: %q", data)
	}
	damaged := bytes.Replace(data, []byte("100 EUR"), []byte("900 EUR"), 1)
	if err := os.WriteFile(path, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := s.Workflow("wa")
	var we *WorkflowCorruptError
	var ce *CorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &we) || !errors.As(err, &ce) {
		t.Fatalf("read of the damaged record: %+v, %v; want a *WorkflowCorruptError", w, err)
	}
	msg := err.Error()
	for _, want := range []string{path, "checksum", "nothing was changed", "restore " + path + " from a backup",
		"move wa.cbor out of " + filepath.Dir(path), "workflow wa"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "agent aside") {
		t.Errorf("the error speaks of an agent: %s", msg)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
		t.Fatal("the refused record changed")
	}
}

// Regression: a record copied to another name (cp workflows/wa.cbor
// workflows/wq.cbor) was read as workflow wq while it held wa, so a resume
// of wq took wq's lock and ran and wrote wa, and ls listed wa twice. A
// record is read only as the workflow it holds; the copy is refused, with
// what to do, and the original still reads.
func TestWorkflowRecordOfAnotherIDRefused(t *testing.T) {
	s, path := putWorkflowFile(t, "wa", "100 EUR")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(filepath.Dir(path), "wq.cbor")
	if err := os.WriteFile(copied, data, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := s.Workflow("wq")
	var we *WorkflowCorruptError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &we) || we.Holds != "wa" {
		t.Fatalf("read of wq: %+v, %v; want it refused as holding wa", w, err)
	}
	for _, want := range []string{copied, `holds workflow "wa", not "wq"`, "move wq.cbor out of", "nothing was changed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %s", want, err)
		}
	}
	if w, err := s.Workflow("wa"); err != nil || w.ID != "wa" {
		t.Fatalf("the original: %+v, %v", w, err)
	}
	m := NewMemStore()
	m.workflows = map[string][]byte{"wq": data}
	if _, err := m.Workflow("wq"); !errors.As(err, &we) || we.Holds != "wa" {
		t.Fatalf("the memory store read wa's record as wq: %v", err)
	}
}

// A record of version 1, which has no checksum, is still read, as a
// record of this version (so that it is written back with its checksum),
// and refused under another name like any other.
func TestWorkflowVersion1RecordRead(t *testing.T) {
	t0 := time.Unix(1, 0).UTC()
	old := &Workflow{Schema: 1, ID: "wv", Name: "pay", Flow: []byte("name: pay\n"), Started: t0, Updated: t0, Status: StatusPaused,
		Steps: []WorkflowStep{{Name: "quote", Output: "100 EUR", Started: t0, Finished: t0}}}
	v1, err := encMode.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	w, err := DecodeWorkflow("wv.cbor", "wv", v1)
	if err != nil {
		t.Fatal(err)
	}
	want := *old
	want.Schema = WorkflowSchemaVersion
	if !reflect.DeepEqual(w, &want) {
		t.Fatalf("read\n%+v\nwant\n%+v", w, &want)
	}
	v2, err := EncodeWorkflow(w)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := DecodeWorkflow("wv.cbor", "wv", v2); err != nil || !reflect.DeepEqual(again, w) {
		t.Fatalf("written back and read: %+v, %v", again, err)
	}
	if _, err := DecodeWorkflow("wq.cbor", "wq", v1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a record of version 1 read under another id: %v", err)
	}
}

// What no version writes is refused as damage: a checksum that does not
// match, a version below 1, a record inside that is not of its version.
func TestDecodeWorkflowEnvelopeDamage(t *testing.T) {
	rec, err := encMode.Marshal(&Workflow{Schema: WorkflowSchemaVersion, ID: "wf-1"})
	if err != nil {
		t.Fatal(err)
	}
	v1rec, err := encMode.Marshal(&Workflow{Schema: 1, ID: "wf-1"})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]workflowFile{
		"bad checksum":      {Schema: 2, Record: rec, Sum: 1},
		"version 0":         {Schema: 0, Record: rec, Sum: workflowSum(rec)},
		"inner version 1":   {Schema: 2, Record: v1rec, Sum: workflowSum(v1rec)},
		"no record":         {Schema: 2},
		"record not a map":  {Schema: 2, Record: []byte{0x05}, Sum: workflowSum([]byte{0x05})},
		"record cut short":  {Schema: 2, Record: rec[:len(rec)-1], Sum: workflowSum(rec[:len(rec)-1])},
		"junk after record": {Schema: 2, Record: append(append([]byte{}, rec...), 0), Sum: workflowSum(append(append([]byte{}, rec...), 0))},
	} {
		data, err := encMode.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeWorkflow("w", "wf-1", data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
	future, err := encMode.Marshal(workflowFile{Schema: WorkflowSchemaVersion + 1, Record: []byte("?")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeWorkflow("w", "wf-1", future); !errors.Is(err, ErrFutureSchema) {
		t.Errorf("a record of a newer version: %v", err)
	}
}

func workflowSum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
