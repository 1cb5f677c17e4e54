package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Regression: an import that failed after the agent's state was written
// left a partial agent (no event history, here), and the next import
// was refused with "already exists". A failed import leaves no agent, and
// the import run again, once the cause is gone, makes the whole agent.
func TestImportFailedPartwayLeavesNoAgent(t *testing.T) {
	src, _ := exportable(t)
	a, err := ReadArchive(bytes.NewReader(exportBytes(t, src)))
	must(t, err)
	dst, err := OpenFileStore(t.TempDir())
	must(t, err)
	// The event history's file cannot be made: a directory holds its
	// name, so the import fails after the state and bookmarks are in.
	events := filepath.Join(dst.dir, "agents", "a1", eventsFile)
	must(t, os.MkdirAll(filepath.Join(events, "x"), 0o700))
	err = Import(dst, a, ThisProcess("import"))
	if err == nil {
		t.Fatal("import with an event history it cannot write succeeded")
	}
	if dst.Exists("a1") {
		t.Fatalf("the failed import (%v) left agent a1 behind", err)
	}
	must(t, os.RemoveAll(events))
	if err := Import(dst, a, ThisProcess("import")); err != nil {
		if errors.Is(err, ErrExists) {
			t.Fatalf("import again after a failed one: %v", err)
		}
		t.Fatal(err)
	}
	rec, err := dst.Read("a1")
	must(t, err)
	if rec.State.Round != a.State.Round {
		t.Fatalf("imported agent at round %d, want %d", rec.State.Round, a.State.Round)
	}
}
