package checkpoint

import (
	"reflect"
	"testing"
	"time"
)

// Regression: a workflow record did not say which steps had begun, so a
// step whose agent's stored state was removed looked like one that never
// started, and a resume made it again. Version 3 keeps Begun: it is read
// back as written, a record of version 2 (which has none) still reads, with
// no step begun, and is written back as version 3, and a cairn that writes
// version 2 refuses a record of version 3 as newer rather than reading it
// without its Begun.
func TestWorkflowRecordKeepsBegunSteps(t *testing.T) {
	t0 := time.Unix(1, 0).UTC()
	w := &Workflow{Schema: WorkflowSchemaVersion, ID: "wb", Name: "pay", Flow: []byte("name: pay\n"), Started: t0, Updated: t0,
		Status: StatusRunning, Begun: []string{"quote", "pay"}}
	data, err := EncodeWorkflow(w)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeWorkflow("wb.cbor", "wb", data)
	if err != nil || !reflect.DeepEqual(got, w) || !got.HasBegun("pay") || got.HasBegun("ship") {
		t.Fatalf("read back: %+v, %v", got, err)
	}

	old := &Workflow{Schema: 2, ID: "wb", Name: "pay", Flow: []byte("name: pay\n"), Started: t0, Updated: t0, Status: StatusPaused,
		Steps: []WorkflowStep{{Name: "quote", Output: "100 EUR", Started: t0, Finished: t0}}}
	rec, err := encMode.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := encMode.Marshal(workflowFile{Schema: 2, Record: rec, Sum: workflowSum(rec)})
	if err != nil {
		t.Fatal(err)
	}
	got, err = DecodeWorkflow("wb.cbor", "wb", v2)
	want := *old
	want.Schema = WorkflowSchemaVersion
	if err != nil || !reflect.DeepEqual(got, &want) || len(got.Begun) != 0 {
		t.Fatalf("a record of version 2: %+v, %v", got, err)
	}
	// A cairn that writes version 2 refuses a record of any version above
	// its own as newer: so a record that keeps Begun says version 3.
	for name, b := range map[string][]byte{"a record with Begun": data, "a record of version 2 written back": encodedWorkflow(t, got)} {
		var head struct {
			Schema int `cbor:"1,keyasint"`
		}
		if err := decMode.Unmarshal(b, &head); err != nil || head.Schema != 3 {
			t.Errorf("%s is written as version %d (%v), want 3", name, head.Schema, err)
		}
	}
}

func encodedWorkflow(t *testing.T, w *Workflow) []byte {
	t.Helper()
	b, err := EncodeWorkflow(w)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
