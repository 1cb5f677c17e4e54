package overlay

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Removing or renaming onto a workspace file hashes it, and opening one to
// write or renaming it copies it: work in proportion to a file that may be
// far larger than anything the call may stage (a 40 GB sparse file took
// minutes past a 5 s deadline). Once the call's context is done each such
// change fails (EINTR) between two chunks, having changed nothing, so the
// call ends with its deadline.
func TestCopyOfWorkspaceFileStopsAtTheCallsEnd(t *testing.T) {
	ws := t.TempDir()
	big := filepath.Join(ws, "big")
	if err := os.WriteFile(big, []byte("start"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30); err != nil { // sparse
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "small"), []byte("small"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := New(ws, filepath.Join(t.TempDir(), "staging"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fsys, _, err := o.Mount(ctx, false, guestfs.NewBudget(8), guestfs.StagingLimit{Bytes: 4 << 30, Paths: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		do   func() experimentalsys.Errno
	}{
		{"unlink", func() experimentalsys.Errno { return fsys.Unlink("big") }},
		{"rename onto", func() experimentalsys.Errno { return fsys.Rename("small", "big") }},
		{"rename", func() experimentalsys.Errno { return fsys.Rename("big", "moved") }},
		{"open to write", func() experimentalsys.Errno {
			f, e := fsys.OpenFile("big", experimentalsys.O_RDWR, 0)
			if e == 0 {
				f.Close()
			}
			return e
		}},
	} {
		if e := tt.do(); e != experimentalsys.EINTR {
			t.Errorf("%s once the call's context is done: %v, want EINTR", tt.name, e)
		}
	}
	effects, err := o.Effects()
	if err != nil || len(effects) != 0 {
		t.Errorf("effects: %v, %v; want none", effects, err)
	}
	if st, e := fsys.Stat("big"); e != 0 || st.Size != 1<<30 {
		t.Errorf("big: %v, %d bytes", e, st.Size)
	}
	if entries, _ := os.ReadDir(o.staging); len(entries) != 0 {
		t.Errorf("%d files left in staging", len(entries))
	}
}
