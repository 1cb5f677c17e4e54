package host

import (
	"bytes"
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

// Regression: a kept record damaged where it names a file, or in a
// file's bytes, was shown as a diff: a path whose name lost a byte as a
// file the call made from nothing, and bytes changed as what the file
// held. Each side is checked against the call's manifest, as undo checks
// what it restores, and a side that is not what it says is refused as
// damaged, naming the record.
func TestDiffOfAKeptRecordDamagedInAFileIsRefused(t *testing.T) {
	for name, damage := range map[string]func(rec []byte) []byte{
		"a path": func(rec []byte) []byte {
			// The file before the call: the second "a.txt", the manifest's first.
			i := bytes.Index(rec, []byte("a.txt"))
			j := i + 1 + bytes.Index(rec[i+1:], []byte("a.txt"))
			rec[j] = 'b'
			return rec
		},
		"a file's bytes": func(rec []byte) []byte {
			rec[bytes.Index(rec, []byte("first"))] = 'F'
			return rec
		},
		"the file after": func(rec []byte) []byte {
			rec[bytes.LastIndex(rec, []byte("second"))+1] = 'E'
			return rec
		},
	} {
		t.Run(name, func(t *testing.T) {
			eng, store := fileEngine(t)
			af := agentIn(t, `
name: over
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, `
turns:
  - tool_calls: [{name: write_file, input: {path: a.txt, content: first}}]
  - tool_calls: [{name: write_file, input: {path: a.txt, content: second}}]
  - text: done
`)
			_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "over", Prompt: "go"})
			must(t, err)
			records, _ := filepath.Glob(filepath.Join(stagingRootOf(store, "over"), "..", "changes", "round-2", "*"))
			if len(records) != 1 {
				t.Fatalf("round 2 kept %v, want one call's record", records)
			}
			rec, err := os.ReadFile(records[0])
			must(t, err)
			must(t, os.WriteFile(records[0], damage(rec), 0o600))
			_, changes, err := eng.Changes(context.Background(), "over", 2)
			if err == nil {
				for _, c := range changes {
					if _, _, err = c.Texts(); err != nil {
						break
					}
				}
			}
			if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), filepath.Clean(records[0])) {
				t.Fatalf("a diff of the damaged record: %v; want it refused as damaged, naming %s", err, records[0])
			}
		})
	}
}
