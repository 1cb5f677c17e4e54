package overlay_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Reads lists the workspace files a call read as they were, in the paths
// effects use; a file it wrote first and read back is its own, not read.
func TestOverlayReads(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	for _, f := range []string{"a.txt", "sub/b.txt", "c.txt"} {
		os.WriteFile(filepath.Join(ws, f), []byte(f), 0o644)
	}
	ov, err := overlay.New(ws, filepath.Join(t.TempDir(), "staging"))
	if err != nil {
		t.Fatal(err)
	}
	defer ov.Close()
	ovprog(t, sandbox.Mount{Overlay: ov}, "cat:/work/a.txt", "cat:/work/sub/b.txt", "write:/work/c.txt:mine", "cat:/work/c.txt", "ls:/work")
	if got := ov.Reads(); !slices.Equal(got, []string{"a.txt", "sub/b.txt"}) {
		t.Fatalf("reads %q", got)
	}
}
