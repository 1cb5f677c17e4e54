package overlay

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// mounted is an overlay of ws, staged in a fresh directory, mounted
// writable with a staging limit of limit bytes: the filesystem a guest's
// WASI calls reach, for tests that make those calls themselves.
func mounted(t testing.TB, ws string, limit int64) (*Overlay, experimentalsys.FS) {
	t.Helper()
	o, err := New(ws, filepath.Join(t.TempDir(), "staging"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	fsys, _, err := o.Mount(context.Background(), false, guestfs.NewBudget(64), guestfs.StagingLimit{Bytes: limit, Paths: guestfs.DefaultMaxStagedPaths})
	if err != nil {
		t.Fatal(err)
	}
	return o, fsys
}

// create opens a new file of the mount to read and write.
func create(t testing.TB, fsys experimentalsys.FS, p string) experimentalsys.File {
	t.Helper()
	f, e := fsys.OpenFile(p, experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o644)
	if e != 0 {
		t.Fatalf("create %s: %v", p, e)
	}
	return f
}

// usedBytes is what the overlay has charged against its staging limit.
func usedBytes(o *Overlay) int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.used
}
