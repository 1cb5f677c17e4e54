package pgstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a changed byte in a workflow's row (a step's output "100
// EUR" made "900 EUR") was read as the record, and a copy of one
// workflow's row under another id was read as that other workflow. Both
// are refused, naming the row, with advice that fits a database.
func TestWorkflowRowDamageRefused(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	t0 := time.Unix(1, 0).UTC()
	must(t, s.PutWorkflow(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: "wa", Name: "pay", Started: t0, Updated: t0,
		Steps: []checkpoint.WorkflowStep{{Name: "quote", Output: "100 EUR", Started: t0, Finished: t0}}}))
	execSQL(t, url, `INSERT INTO cairn_workflows (id, data) SELECT 'wq', data FROM cairn_workflows WHERE id = 'wa'`)
	execSQL(t, url, `UPDATE cairn_workflows SET data = overlay(data placing '9'::bytea from position('100 EUR'::bytea in data)) WHERE id = 'wa'`)
	for id, want := range map[string]string{"wa": "checksum", "wq": `holds workflow "wa", not "wq"`} {
		fix := "restore the database from a backup"
		if id == "wq" {
			fix = "it is not the record of workflow wq"
		}
		_, err := s.Workflow(id)
		if !errors.Is(err, checkpoint.ErrCorrupt) {
			t.Fatalf("read of %s: %v, want ErrCorrupt", id, err)
		}
		for _, w := range []string{want, id + " in cairn_workflows", fix, "DELETE FROM cairn_workflows WHERE id = '" + id + "'"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: the error does not say %q: %v", id, w, err)
			}
		}
	}
}
