package sandbox

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// rootPaths are the path forms wazero hands a filesystem for a directory
// opened at a mount's root (which it names ""): "/" + the guest's path.
// Each must stay inside the mount as a relative path does; none may reach
// the secret beside it.
var rootPaths = []string{
	"/../outside.txt", "//../outside.txt", "/./../outside.txt", "/sub/../../outside.txt",
	"/planted-link", "/planted-abs", "/planted-dir/outside.txt", "///planted-dir/outsidedir/secret.txt",
	"/planted-hard", "/planted-devnull", "/fifo",
}

// A path that arrives with leading slashes, as wazero joins one under a
// directory opened at a mount's root, is read inside the mount — on the
// workspace filesystem and on an overlay alike — and gets out of it by
// neither "..", a planted symlink nor a planted hard link; writing through
// one changes nothing outside.
func TestEscapeRootRelativePaths(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, true)
			before := f.outsideHash(t)
			fsys := mountFS(t, f, kind)
			if got := readAll(t, fsys, "/inside.txt"); got != "inside" {
				t.Fatalf("reading /inside.txt: %q, want the file inside the mount", got)
			}
			for _, p := range rootPaths {
				if got := readAll(t, fsys, p); strings.Contains(got, secret) {
					t.Errorf("%s read the secret outside the mount", p)
				}
				if fl, e := fsys.OpenFile(p, experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0); e == 0 {
					fl.Write([]byte("pwned"))
					fl.Close()
				}
				fsys.Rename("/inside.txt", p)
				fsys.Unlink(p)
			}
			// A directory renamed over a directory, which the workspace
			// filesystem does with rename(2) on the parents: over one
			// inside it works, over one outside (through a planted link)
			// does not.
			for _, to := range []string{"/planted-dir/outsidedir", "//planted-dir/outsidedir/", "/sub/../../outsidedir"} {
				must(t, errOf(fsys.Mkdir("/d1", 0)))
				if e := fsys.Rename("/d1", to); e == 0 {
					t.Errorf("renaming a directory over %s succeeded", to)
				}
				must(t, errOf(fsys.Rmdir("/d1")))
			}
			must(t, errOf(fsys.Mkdir("/d2", 0)))
			if e := fsys.Rename("/d2", "/sub"); e != 0 {
				t.Errorf("renaming a directory over an empty one inside: %v", e)
			}
			if after := f.outsideHash(t); after != before {
				t.Error("the host filesystem outside the workspace changed")
			}
			f.checkWorkspaceLinks(t)
		})
	}
}

// mountFS is the fixture's workspace served the way kind says, as a call
// sees it.
func mountFS(t *testing.T, f fixture, kind string) experimentalsys.FS {
	mt := Mount{HostPath: f.ws}
	if kind == "overlay" {
		ov, _ := newOverlay(t, f.ws)
		mt = Mount{Overlay: ov}
	}
	fsys, closeFS, err := mt.open(context.Background(), guestfs.NewBudget(0), Policy{}.staging())
	must(t, err)
	t.Cleanup(func() { closeFS() })
	return fsys
}

// readAll reads the file at p, or returns "" when it cannot be opened.
func readAll(t *testing.T, fsys experimentalsys.FS, p string) string {
	fl, e := fsys.OpenFile(p, experimentalsys.O_RDONLY, 0)
	if e != 0 {
		return ""
	}
	defer fl.Close()
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, e := fl.Read(buf)
		out = append(out, buf[:n]...)
		if n == 0 || e != 0 {
			return string(out)
		}
	}
}

// errOf is e as an error, nil for 0.
func errOf(e experimentalsys.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}
