package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A workflow record of a newer schema is refused with a
// *FutureSchemaError and its file is left as it was.
func TestWorkflowFutureSchemaRefused(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &Workflow{Schema: WorkflowSchemaVersion + 1, ID: "wf-1", Started: time.Unix(1, 0).UTC()}
	data, err := encMode.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), workflowDir, "wf-1.cbor")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.Workflow("wf-1")
	var fe *FutureSchemaError
	if !errors.As(err, &fe) || fe.Version != WorkflowSchemaVersion+1 {
		t.Fatalf("got %v, want a *FutureSchemaError of version %d", err, WorkflowSchemaVersion+1)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Fatal("the refused record changed")
	}
}

func TestDecodeWorkflowDamage(t *testing.T) {
	good, err := EncodeWorkflow(&Workflow{Schema: WorkflowSchemaVersion, ID: "wf-1", Steps: []WorkflowStep{{Name: "a", Output: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-2],
		"junk tail": append(append([]byte{}, good...), 0xff),
		"not cbor":  []byte("name: flow"),
	} {
		if _, err := DecodeWorkflow("w", "wf-1", data); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %v, want ErrCorrupt", name, err)
		}
	}
	if w, err := DecodeWorkflow("w", "wf-1", good); err != nil || w.Steps[0].Output != "x" {
		t.Fatalf("good record: %+v, %v", w, err)
	}
}

func FuzzDecodeWorkflow(f *testing.F) {
	good, _ := EncodeWorkflow(&Workflow{Schema: WorkflowSchemaVersion, ID: "wf-1", Steps: []WorkflowStep{{Name: "a"}}})
	v1, _ := encMode.Marshal(&Workflow{Schema: 1, ID: "wf-1", Steps: []WorkflowStep{{Name: "a"}}})
	f.Add(good)
	f.Add(v1)
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := DecodeWorkflow("fuzz", "wf-1", data)
		if err == nil {
			if _, err := EncodeWorkflow(w); err != nil && w.Schema == WorkflowSchemaVersion {
				t.Fatalf("a decoded record does not encode: %v", err)
			}
		}
	})
}

func FuzzDecodeFact(f *testing.F) {
	good, _ := EncodeFact(Fact{Key: "k", Text: "t", Agent: "a", Round: 1})
	f.Add(good)
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if fact, err := DecodeFact("fuzz", data); err == nil {
			if _, err := EncodeFact(fact); err != nil {
				t.Fatalf("a decoded fact does not encode: %v", err)
			}
		}
	})
}

// BenchmarkPutWorkflow is the cost of journaling one completed step: the
// whole record of a workflow with 5 completed steps of 1 KiB output each,
// replaced durably.
func BenchmarkPutWorkflow(b *testing.B) {
	s, err := OpenFileStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	w := &Workflow{Schema: WorkflowSchemaVersion, ID: "wf-1", Flow: make([]byte, 2048), Started: time.Unix(1, 0).UTC()}
	for i := range 5 {
		w.Steps = append(w.Steps, WorkflowStep{Name: fmt.Sprintf("s%d", i), Output: string(make([]byte, 1024))})
	}
	for b.Loop() {
		if err := s.PutWorkflow(w); err != nil {
			b.Fatal(err)
		}
	}
}
