package overlay_test

import (
	"crypto/sha256"
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

// ReadWhole is the content of a file the call read in one pass from its
// start to its end, hashed as the call read it; a file read in part, at
// an offset, or written by the call first has none.
func TestReadWholeIsWhatTheCallRead(t *testing.T) {
	ws := t.TempDir()
	for name, text := range map[string]string{"a.txt": "alpha", "b.txt": "bravo bravo", "c.txt": "charlie"} {
		must(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o640))
	}
	ov, err := overlay.New(ws, filepath.Join(t.TempDir(), "staging"))
	must(t, err)
	defer ov.Close()
	out := ovprog(t, sandbox.Mount{Overlay: ov}, "cat:/work/a.txt", "head:/work/b.txt:3", "pread:/work/c.txt:2",
		"write:/work/d.txt:delta", "cat:/work/d.txt")
	if want := []string{`cat /work/a.txt "alpha"`, `head /work/b.txt "bra"`, `pread /work/c.txt "arlie"`}; !slices.Equal(out[:3], want) {
		t.Fatalf("ovprog printed %q, want %q first", out, want)
	}
	v, mode, ok := ov.ReadWhole("a.txt")
	if sum := sha256.Sum256([]byte("alpha")); !ok || v.Hash != sum || v.Size != 5 || !v.Exists || mode != 0o640 {
		t.Fatalf("a.txt read whole: %v %v %v; want %x, 5 bytes, -rw-r-----", v, mode, ok, sum)
	}
	for _, p := range []string{"b.txt", "c.txt", "d.txt", "e.txt"} {
		if v, _, ok := ov.ReadWhole(p); ok {
			t.Errorf("%s: read whole as %v", p, v)
		}
	}
}
