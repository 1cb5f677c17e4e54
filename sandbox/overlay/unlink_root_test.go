package overlay

import (
	"os"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Unlinking the mount's root is EISDIR, as unlink(2) says of a directory
// and as a plain mount says.
func TestUnlinkOfMountRootIsEISDIR(t *testing.T) {
	ws := t.TempDir()
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	plain := &guestfs.Dir{Root: root, Files: guestfs.NewBudget(1)}
	_, fsys := mounted(t, ws, 1<<20)
	for _, p := range []string{".", "/", ""} {
		if e := plain.Unlink(p); e != experimentalsys.EISDIR {
			t.Fatalf("a plain mount's unlink of %q: %v, want EISDIR", p, e)
		}
		if e := fsys.Unlink(p); e != experimentalsys.EISDIR {
			t.Errorf("unlink of %q: %v, want EISDIR", p, e)
		}
	}
}
