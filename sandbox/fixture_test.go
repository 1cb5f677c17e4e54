package sandbox

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/internal/dirtree"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

const secret = "SECRET-OUTSIDE-THE-MOUNT"

// fixture is a directory laid out for escape attempts:
//
//	outside.txt              the secret, beside the mounts
//	outsidedir/secret.txt    the secret again, in a directory
//	ws/                      the read-write workspace, mounted at /work
//	  inside.txt, sub/
//	  planted-link -> ../outside.txt     links the host left there
//	  planted-abs  -> DIR/outside.txt
//	  planted-dir  -> ..
//	  planted-devnull -> /dev/null
//	  planted-hard                       a hard link to outside.txt
//	  fifo, sock, device                 a FIFO, a listening unix socket,
//	                                     and (as root) a character device
//	ro/                      a read-only mount, at /ro
//	  ro.txt, rosub/
type fixture struct {
	dir, ws, ro string
	special     bool // the FIFO, socket and device are there
}

func newFixture(t *testing.T, special bool) fixture {
	t.Helper()
	dir := t.TempDir()
	f := fixture{dir: dir, ws: filepath.Join(dir, "ws"), ro: filepath.Join(dir, "ro"), special: special}
	outside := filepath.Join(dir, "outside.txt")
	must(t, os.WriteFile(outside, []byte(secret), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "outsidedir"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "outsidedir", "secret.txt"), []byte(secret), 0o644))
	must(t, os.MkdirAll(filepath.Join(f.ws, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.ws, "inside.txt"), []byte("inside"), 0o644))
	must(t, os.MkdirAll(filepath.Join(f.ro, "rosub"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.ro, "ro.txt"), []byte("read-only"), 0o644))
	for link, target := range map[string]string{"planted-link": "../outside.txt", "planted-abs": outside,
		"planted-dir": "..", "planted-devnull": "/dev/null"} {
		must(t, os.Symlink(target, filepath.Join(f.ws, link)))
	}
	must(t, os.Link(outside, filepath.Join(f.ws, "planted-hard")))
	if special {
		f.plantSpecial(t)
	}
	return f
}

// plantSpecial adds the FIFO, the socket and, when the test may make
// one, a character device like /dev/null.
func (f fixture) plantSpecial(t *testing.T) {
	must(t, syscall.Mkfifo(filepath.Join(f.ws, "fifo"), 0o644))
	l, err := net.Listen("unix", filepath.Join(f.ws, "sock"))
	must(t, err)
	t.Cleanup(func() { l.Close() })
	if err := syscall.Mknod(filepath.Join(f.ws, "device"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("no device file in the fixture (%v); device cases see a missing file", err)
	}
}

// mounts is the workspace at /work, read-write, and ro at /ro.
func (f fixture) mounts() []Mount {
	return []Mount{{HostPath: f.ws, GuestPath: "/work"}, {HostPath: f.ro, GuestPath: "/ro", ReadOnly: true}}
}

// outsideHash hashes everything under the fixture but the read-write
// workspace: names, modes, link targets and contents.
func (f fixture) outsideHash(t *testing.T) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == f.ws {
			return filepath.SkipDir
		}
		lines = append(lines, describe(t, p, d))
		return nil
	})
	must(t, err)
	sort.Strings(lines)
	return fmt.Sprintf("%x", sha256.Sum256([]byte(strings.Join(lines, "\n"))))
}

func describe(t *testing.T, p string, d fs.DirEntry) string {
	fi, err := d.Info()
	must(t, err)
	line := fmt.Sprintf("%s %v %d", p, fi.Mode(), fi.ModTime().UnixNano())
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		line += " -> " + target
	case fi.Mode().IsRegular():
		b, err := os.ReadFile(p)
		must(t, err)
		line += fmt.Sprintf(" %x", sha256.Sum256(b))
	}
	return line
}

// checkWorkspaceLinks fails if the workspace holds a link the host did
// not plant: a symlink, or a regular file with a second name.
func (f fixture) checkWorkspaceLinks(t *testing.T) {
	t.Helper()
	planted := map[string]bool{"planted-link": true, "planted-abs": true, "planted-dir": true,
		"planted-devnull": true, "planted-hard": true}
	err := filepath.WalkDir(f.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || planted[d.Name()] {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t.Errorf("the guest made the symlink %s", p)
		case fi.Mode().IsRegular() && st != nil && st.Nlink > 1:
			t.Errorf("the guest made a hard link: %s has %d names", p, st.Nlink)
		}
		return nil
	})
	must(t, err)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// results parses a guest's output, one "NAME REST" line per attempt.
func results(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, rest, _ := strings.Cut(line, " ")
		m[name] = rest
	}
	return m
}

// newOverlay makes an overlay of ws staged in a fresh directory.
func newOverlay(t testing.TB, ws string) (*overlay.Overlay, string) {
	t.Helper()
	staging := filepath.Join(t.TempDir(), "staging")
	ov, err := overlay.New(ws, staging)
	must(t, err)
	t.Cleanup(func() { ov.Close() })
	return ov, staging
}

// tree is everything under dir by slash path, as dirtree.Read gives it.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	m, err := dirtree.Read(dir)
	must(t, err)
	return m
}

func sameTree(t testing.TB, what string, got, want map[string]string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}
