package overlay

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A directory is renamed entry by entry; when one entry fails (here a
// workspace file whose copy stops because the call's time is up; a file
// the host may not read does the same), the entries already moved are put
// back: the rename fails whole, as rename(2)'s does. It once left them
// moved, and a tool that then answered had half a rename applied.
func TestFailedRenameOfDirMovesNothing(t *testing.T) {
	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "d", "b"), []byte("workspace"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := New(ws, filepath.Join(t.TempDir(), "staging"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithCancel(context.Background())
	fsys, _, err := o.Mount(ctx, false, guestfs.NewBudget(8), guestfs.StagingLimit{Bytes: 1 << 20, Paths: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Sorted before b: a file and a directory the call made, which move
	// without reading the workspace.
	f := create(t, fsys, "d/a")
	f.Write([]byte("staged"))
	f.Close()
	if e := fsys.Mkdir("d/a0", 0o755); e != 0 {
		t.Fatal(e)
	}
	create(t, fsys, "d/a0/x").Close()
	before, err := o.Effects()
	if err != nil {
		t.Fatal(err)
	}
	used, staged := usedBytes(o), stagedNames(t, o)
	cancel()
	if e := fsys.Rename("d", "e"); e != experimentalsys.EINTR {
		t.Fatalf("rename d e: %v, want EINTR", e)
	}
	after, err := o.Effects()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after, before) {
		t.Errorf("effects after the failed rename:\n%v\nwant those before it:\n%v", after, before)
	}
	if got := usedBytes(o); got != used {
		t.Errorf("charged %d after the failed rename, want %d", got, used)
	}
	if got := stagedNames(t, o); !slices.Equal(got, staged) {
		t.Errorf("staged %q after the failed rename, want %q", got, staged)
	}
	for _, p := range []string{"d/a", "d/a0/x", "d/b"} {
		if _, e := fsys.Stat(p); e != 0 {
			t.Errorf("%s after the failed rename: %v", p, e)
		}
	}
	if _, e := fsys.Stat("e"); e != experimentalsys.ENOENT {
		t.Errorf("e after the failed rename: %v, want ENOENT", e)
	}
	// The call's files read nothing once it has to stop: d/a is read in
	// the next call's.
	fsys, _, err = o.Mount(context.Background(), false, guestfs.NewBudget(8), guestfs.StagingLimit{Bytes: 1 << 20, Paths: 100})
	if err != nil {
		t.Fatal(err)
	}
	rf, e := fsys.OpenFile("d/a", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatal(e)
	}
	defer rf.Close()
	buf := make([]byte, 16)
	if n, _ := rf.Read(buf); string(buf[:n]) != "staged" {
		t.Errorf("d/a holds %q after the failed rename, want %q", buf[:n], "staged")
	}
}

// stagedNames lists the files of o's staging directory.
func stagedNames(t *testing.T, o *Overlay) []string {
	t.Helper()
	ents, err := os.ReadDir(o.staging)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
