package workflow_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/workflow"
)

// payFlow is a workflow whose second step is given the first's output:
// a changed output of the first would reach the second.
const payFlow = "name: pay\nworkspace: ws\nsteps:\n" +
	"  - {name: quote, tool: read_file, module: builtin, input: {path: quote.txt}}\n" +
	"  - {name: pay, needs: [quote], tool: write_file, module: builtin, input: {path: paid.txt, content: '{{steps.quote.output}}'}}\n"

// stoppedPayFlow runs payFlow as workflow id in a store at dir and stops
// it once its first step has completed.
func stoppedPayFlow(t *testing.T, dir, id string) (*checkpoint.FileStore, string) {
	t.Helper()
	flows := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(flows, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(flows, "ws", "quote.txt"), []byte("100 EUR"), 0o644))
	must(t, os.WriteFile(filepath.Join(flows, "flow.yaml"), []byte(payFlow), 0o644))
	f, err := workflow.Load(filepath.Join(flows, "flow.yaml"))
	must(t, err)
	store, err := checkpoint.OpenFileStore(dir)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := workflow.Run(ctx, engine(t, store), f, workflow.Options{ID: id, OnStep: func(ev workflow.StepEvent) {
		if ev.Type == "done" {
			cancel()
		}
	}})
	must(t, err)
	if res.Status != checkpoint.StatusPaused || len(res.Ran) != 1 || !strings.Contains(outputs(res.Record)["quote"], "100 EUR") {
		t.Fatalf("stopped run: %s (%s), ran %v", res.Status, res.Reason, res.Ran)
	}
	return store, filepath.Join(flows, "ws")
}

// Regression: a byte changed in a stored step's output ("100 EUR" to "900
// EUR") was taken by resume as the step's output and fed to the step that
// needs it. The resume is refused, naming the record's file and what to do
// with the workflow's record, and the store and the workspace are left
// byte for byte as they were.
func TestResumeRefusesDamagedRecord(t *testing.T) {
	dir := t.TempDir()
	store, ws := stoppedPayFlow(t, dir, "wa")
	path := filepath.Join(dir, "workflows", "wa.cbor")
	data, err := os.ReadFile(path)
	must(t, err)
	must(t, os.WriteFile(path, bytes.Replace(data, []byte("100 EUR"), []byte("900 EUR"), 1), 0o600))
	before, wsBefore := tree(t, dir), tree(t, ws)
	res, err := workflow.Resume(context.Background(), engine(t, store), "wa", workflow.Options{})
	if !errors.Is(err, checkpoint.ErrCorrupt) {
		t.Fatalf("resume of the damaged record: %+v, %v; want ErrCorrupt", res, err)
	}
	for _, want := range []string{path, "checksum", "restore", "move wa.cbor out of"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if after := tree(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("the store changed:\nbefore %v\nafter  %v", before, after)
	}
	if after := tree(t, ws); !reflect.DeepEqual(after, wsBefore) {
		t.Errorf("the workspace changed:\nbefore %v\nafter  %v", wsBefore, after)
	}
}

// Regression: with workflows/wa.cbor copied to workflows/wq.cbor, a resume
// of wq took wq's lock but ran and wrote workflow wa, and List gave wa
// twice. The copy is refused as holding another workflow, nothing is run
// or written, and List gives wa once and wq as unreadable.
func TestRecordUnderAnotherNameRefused(t *testing.T) {
	dir := t.TempDir()
	store, ws := stoppedPayFlow(t, dir, "wa")
	data, err := os.ReadFile(filepath.Join(dir, "workflows", "wa.cbor"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "workflows", "wq.cbor"), data, 0o600))
	before, wsBefore := tree(t, dir), tree(t, ws)
	res, err := workflow.Resume(context.Background(), engine(t, store), "wq", workflow.Options{})
	if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), `holds workflow "wa", not "wq"`) {
		t.Fatalf("resume of wq: %+v, %v; want it refused as holding wa", res, err)
	}
	if after := tree(t, dir); !reflect.DeepEqual(after, before) {
		t.Errorf("the store changed:\nbefore %v\nafter  %v", before, after)
	}
	if after := tree(t, ws); !reflect.DeepEqual(after, wsBefore) {
		t.Errorf("the workspace changed:\nbefore %v\nafter  %v", wsBefore, after)
	}
	recs, errs, err := workflow.List(store)
	must(t, err)
	if len(recs) != 1 || recs[0].ID != "wa" || len(errs) != 1 || !errors.Is(errs["wq"], checkpoint.ErrCorrupt) {
		t.Fatalf("List: %d records (%v), errors %v; want wa once and wq unreadable", len(recs), recs, errs)
	}
}
