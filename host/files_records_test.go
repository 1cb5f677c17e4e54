package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// The pool entries of a round are journaled in as many RecFiles records
// as keep each within filesRecordBytes, and replay merges them all. A
// round's calls may each see 100,000 paths of 16 MiB of names; written as
// one record, the files of a round of three such calls passed the 64 MiB
// a journal frame holds, and the round could never commit. Here the bound
// is lowered so that a round of twelve reads passes it.
func TestARoundsFilesAreJournaledInRecordsWithinTheirBound(t *testing.T) {
	defer func(n int) { filesRecordBytes = n }(filesRecordBytes)
	filesRecordBytes = 300
	var calls []string
	for i := range 12 {
		calls = append(calls, fmt.Sprintf("{name: read_file, input: {path: file-%02d.txt}}", i))
	}
	af := agentIn(t, `
name: reader
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
`, "turns:\n  - tool_calls: ["+strings.Join(calls, ", ")+"]\n  - text: done\n")
	for i := range 12 {
		if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), fmt.Sprintf("file-%02d.txt", i)), []byte("text"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng, store := watchedEngine(t, t.TempDir(), nil)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	records := 0
	for _, w := range store.writes {
		for _, rec := range w {
			if rec.Type != checkpoint.RecFiles {
				continue
			}
			records++
			size := 0
			for _, f := range rec.Files {
				size += len(f.Path) + len(f.Call) + fileEntryBytes
			}
			if len(rec.Files) > 1 && size > filesRecordBytes {
				t.Errorf("a files record of %d entries, about %d bytes, past its bound of %d", len(rec.Files), size, filesRecordBytes)
			}
		}
	}
	if records < 2 {
		t.Fatalf("the round's files went in %d records; the bound makes it several", records)
	}
	rec, err := store.Read(res.Agent)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range rec.State.Files {
		seen[f.Path] = true
	}
	for i := range 12 {
		if p := fmt.Sprintf("file-%02d.txt", i); !seen[p] {
			t.Errorf("the state's files lack %s: a record of the round was not merged", p)
		}
	}
}
