package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a diff of a round whose kept changes of a call were cut
// short on disk was refused with "changes of call call_3_0: kept record:
// unexpected EOF", which named neither the agent, the round nor the file,
// nor said that the file was damaged. The refusal names them all.
func TestDiffOfADamagedKeptRecordNamesIt(t *testing.T) {
	eng, store := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: pauseAgent(t), ID: "steps", Prompt: "go"})
	must(t, err)
	if res.Status != StatusDone {
		t.Fatalf("run: %+v", res)
	}
	records, _ := filepath.Glob(filepath.Join(stagingRootOf(store, "steps"), "..", "changes", "round-3", "*"))
	if len(records) != 1 {
		t.Fatalf("round 3 kept %v, want one call's record", records)
	}
	must(t, os.Truncate(records[0], 20))
	_, _, err = eng.Changes(context.Background(), "steps", 3)
	if err == nil {
		t.Fatal("a diff of the round whose record was cut short was shown")
	}
	for _, want := range []string{`"steps"`, "round 3", filepath.Clean(records[0]), "damaged"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("diff refused with %q: it does not say %s", err, want)
		}
	}
}
