package checkpoint

import (
	"bytes"
	"errors"
	"io"
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

// Regression: an import of a tree whose sub-agent failed, after its
// parent's event history was written whole, removed the parent's state
// and kept its history, and the import run again appended the history
// once more: every event of the parent twice.
func TestImportRetriedAfterASubAgentFailedHasEachEventOnce(t *testing.T) {
	a, err := ReadArchive(bytes.NewReader(exportBytes(t, tree(t))))
	must(t, err)
	a.Children[0].Events = []byte("{\"type\":\"run_start\"}\n")
	dst, err := OpenFileStore(t.TempDir())
	must(t, err)
	// The sub-agent's event history cannot be made: a directory holds its
	// name, so the import fails after a1's history is written.
	blocked := filepath.Join(dst.dir, "agents", "c1", eventsFile)
	must(t, os.MkdirAll(filepath.Join(blocked, "x"), 0o700))
	if err := Import(dst, a, ThisProcess("import")); err == nil {
		t.Fatal("an import whose sub-agent's event history could not be written succeeded")
	}
	must(t, os.RemoveAll(blocked))
	must(t, Import(dst, a, ThisProcess("import")))
	for _, x := range []*Archive{a, a.Children[0]} {
		if got := eventsOf(t, dst, x.Agent); !bytes.Equal(got, x.Events) {
			t.Errorf("agent %s's event history after the import run again: %q, want %q", x.Agent, got, x.Events)
		}
	}
}

// eventsOf is the agent's event history in s, as it reads back.
func eventsOf(t *testing.T, s Store, id string) []byte {
	t.Helper()
	r, err := s.ReadEvents(id)
	must(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	must(t, err)
	return b
}
