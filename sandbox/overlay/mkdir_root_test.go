package overlay

import (
	"os"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Regression: making the mount's root on an overlay was EINVAL, where
// mkdir(2) and a plain mount say EEXIST: it is there.
func TestMkdirOfMountRootIsEEXIST(t *testing.T) {
	ws := t.TempDir()
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	plain := &guestfs.Dir{Root: root, Files: guestfs.NewBudget(1)}
	_, fsys := mounted(t, ws, 1<<20)
	for _, p := range []string{".", "/", ""} {
		if e := plain.Mkdir(p, 0); e != experimentalsys.EEXIST {
			t.Fatalf("a plain mount's mkdir of %q: %v, want EEXIST", p, e)
		}
		if e := fsys.Mkdir(p, 0); e != experimentalsys.EEXIST {
			t.Errorf("mkdir of %q: %v, want EEXIST", p, e)
		}
	}
}
