package overlay

import (
	"os"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A huge path ("a/" repeated for 16 MiB) given to any call that takes a
// path is ENAMETOOLONG at once, on a plain mount and on an overlay, with
// nothing allocated for it: resolving it would cost the host a string
// and a step for each of its millions of names (gigabytes and minutes
// past the call's deadline for a 100 MB path), and a name past NAME_MAX
// is refused the same way.
func TestHugePathIsRefusedAtOnce(t *testing.T) {
	ws := t.TempDir()
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, ov := mounted(t, t.TempDir(), 1<<20)
	huge := strings.Repeat("a/", 8<<20)
	for _, mount := range []struct {
		name string
		fsys experimentalsys.FS
	}{
		{"plain", &guestfs.Dir{Root: root, Files: guestfs.NewBudget(8)}},
		{"overlay", ov},
	} {
		for _, p := range []string{huge, "/" + huge, strings.Repeat("n", guestfs.MaxName+1), "d/" + strings.Repeat("n", guestfs.MaxName+1) + "/f"} {
			fsys := mount.fsys
			for _, call := range []struct {
				name string
				do   func() experimentalsys.Errno
			}{
				{"open", func() experimentalsys.Errno { _, e := fsys.OpenFile(p, experimentalsys.O_RDONLY, 0); return e }},
				{"create", func() experimentalsys.Errno {
					_, e := fsys.OpenFile(p, experimentalsys.O_RDWR|experimentalsys.O_CREAT, 0o644)
					return e
				}},
				{"stat", func() experimentalsys.Errno { _, e := fsys.Stat(p); return e }},
				{"lstat", func() experimentalsys.Errno { _, e := fsys.Lstat(p); return e }},
				{"readlink", func() experimentalsys.Errno { _, e := fsys.Readlink(p); return e }},
				{"mkdir", func() experimentalsys.Errno { return fsys.Mkdir(p, 0o755) }},
				{"rmdir", func() experimentalsys.Errno { return fsys.Rmdir(p) }},
				{"unlink", func() experimentalsys.Errno { return fsys.Unlink(p) }},
				{"utimens", func() experimentalsys.Errno { return fsys.Utimens(p, 0, 0) }},
				{"rename from", func() experimentalsys.Errno { return fsys.Rename(p, "x") }},
				{"rename to", func() experimentalsys.Errno { return fsys.Rename("x", p) }},
			} {
				var e experimentalsys.Errno
				allocs := testing.AllocsPerRun(1, func() { e = call.do() })
				if e != experimentalsys.ENAMETOOLONG {
					t.Errorf("%s: %s of a path of %d bytes: %v, want ENAMETOOLONG", mount.name, call.name, len(p), e)
				}
				if allocs > 0 {
					t.Errorf("%s: %s of a path of %d bytes made %v allocations, want none", mount.name, call.name, len(p), allocs)
				}
			}
		}
	}
}
