package overlay

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// renameKinds are what the two names of a rename may be. "s" and "t" are
// the names renamed; beside them a file f0 and a directory d0 (holding
// c0) that links lead to.
var renameKinds = []struct {
	name string
	make func(k renameMaker, p string)
}{
	{"missing", func(renameMaker, string) {}},
	{"file", func(k renameMaker, p string) { k.file(p, p) }},
	{"empty dir", func(k renameMaker, p string) { k.dir(p) }},
	{"dir", func(k renameMaker, p string) { k.dir(p); k.file(p+"/c", p+"/c") }},
	{"link to file", func(k renameMaker, p string) { k.link("f0", p) }},
	{"link to dir", func(k renameMaker, p string) { k.link("d0", p) }},
	{"dangling link", func(k renameMaker, p string) { k.link("nowhere", p) }},
	{"dir holding a link", func(k renameMaker, p string) {
		k.onHost().dir(p)
		k.link("f0", p+"/l")
	}},
	{"link loop", func(k renameMaker, p string) { k.link(p, p) }},
	{"fifo", func(k renameMaker, p string) { must(k.t, syscall.Mkfifo(filepath.Join(k.host, p), 0o644)) }},
}

// renameMaker makes a fixture's entries: files and directories on the
// host or through a mount, symlinks always on the host (a guest cannot
// make one).
type renameMaker struct {
	t    *testing.T
	host string
	fsys experimentalsys.FS // nil: files and directories on the host too
}

// onHost is k making everything on the host.
func (k renameMaker) onHost() renameMaker {
	k.fsys = nil
	return k
}

func (k renameMaker) file(p, content string) {
	if k.fsys == nil {
		must(k.t, os.WriteFile(filepath.Join(k.host, p), []byte(content), 0o644))
		return
	}
	f := create(k.t, k.fsys, p)
	f.Write([]byte(content))
	f.Close()
}

func (k renameMaker) dir(p string) {
	if k.fsys == nil {
		must(k.t, os.Mkdir(filepath.Join(k.host, p), 0o755))
	} else if e := k.fsys.Mkdir(p, 0o755); e != 0 {
		k.t.Fatalf("mkdir %s: %v", p, e)
	}
}

// link makes p a link to target, a name relative to the root.
func (k renameMaker) link(target, p string) {
	target = strings.Repeat("../", strings.Count(p, "/")) + target
	must(k.t, os.Symlink(target, filepath.Join(k.host, p)))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A rename answers as rename(2) on Linux answers, on a plain mount and on
// an overlay, for every kind of source and target (missing, a file, an
// empty and a full directory, one holding a link, a link to a file, to a
// directory, to nothing and to itself, a FIFO), with and without a
// trailing slash on either name, to the same directory and another, and
// leaves the tree as Linux leaves it. The exceptions are the documented
// ones (refusedRename). Linux is asked on a directory of the host. The
// overlay once answered EPERM of a directory renamed onto a link, where
// Linux says ENOTDIR: the link would not have been replaced anyway.
func TestRenameAnswersAsLinux(t *testing.T) {
	for _, src := range renameKinds {
		for _, dst := range renameKinds {
			for _, c := range renameCases() {
				from, to := c.from, c.to
				name := fmt.Sprintf("%s %q to %s %q", src.name, from, dst.name, to)
				linux := t.TempDir()
				fixture(renameMaker{t: t, host: linux}, src.make, dst.make, c.to)
				wantErr := experimentalsys.UnwrapOSError(syscall.Rename(linux+"/"+from, linux+"/"+to))
				want := describeHost(t, linux)
				for _, mount := range []string{"plain", "overlay", "overlay, staged"} {
					ws := t.TempDir()
					var fsys experimentalsys.FS
					k := renameMaker{t: t, host: ws}
					if mount == "plain" {
						root, err := os.OpenRoot(ws)
						must(t, err)
						defer root.Close()
						fsys = &guestfs.Dir{Root: root, Files: guestfs.NewBudget(8)}
					} else {
						_, fsys = mounted(t, ws, 1<<20)
					}
					if mount == "overlay, staged" {
						k.fsys = fsys
					}
					fixture(k, src.make, dst.make, c.to)
					gotErr := fsys.Rename(from, to)
					if refused := refusedRename(mount, src.name, dst.name, from, to); wantErr == 0 && refused != 0 {
						if gotErr != refused {
							t.Errorf("%s: %s: %v, want %v (Linux renames it, cairn refuses it by design)", mount, name, gotErr, refused)
						}
						continue
					}
					if gotErr != wantErr {
						t.Errorf("%s: %s: %v, Linux says %v", mount, name, gotErr, wantErr)
						continue
					}
					if got := describe(t, fsys); got != want {
						t.Errorf("%s: %s: left\n%s\nLinux left\n%s", mount, name, got, want)
					}
				}
			}
		}
	}
}

// renameCases are the names a rename of s is asked with: to t beside
// it, or to sub/t in another directory, each with and without a
// trailing slash on either name.
func renameCases() (cases []struct{ from, to string }) {
	for _, to := range []string{"t", "sub/t"} {
		for _, slashes := range []string{"", "from/", "to/", "both/"} {
			c := struct{ from, to string }{"s", to}
			if slashes == "from/" || slashes == "both/" {
				c.from += "/"
			}
			if slashes == "to/" || slashes == "both/" {
				c.to += "/"
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// refusedRename is what cairn answers by design, on mount, of a rename
// that Linux makes (docs/threat-model.md): an overlay renames and
// replaces no workspace symlink, nor a directory holding one (EPERM),
// nor a special file (EACCES); a plain mount moves neither of the first
// two to another directory (EPERM). Zero: cairn renames it as Linux does.
func refusedRename(mount, src, dst, from, to string) experimentalsys.Errno {
	moves := strings.Contains(to, "/") && strings.TrimSuffix(to, "/") != "t"
	linked := strings.Contains(src, "link")
	switch {
	case mount == "plain" && linked && moves:
		return experimentalsys.EPERM
	case mount == "plain":
		return 0
	case linked || strings.Contains(dst, "link"):
		return experimentalsys.EPERM
	case src == "fifo" || dst == "fifo":
		return experimentalsys.EACCES
	}
	return 0
}

// fixture makes f0, d0/c0 and sub, then the source s and the target to
// (t or sub/t, without its slash).
func fixture(k renameMaker, src, dst func(renameMaker, string), to string) {
	h := k.onHost() // what links lead to is read on the host, and sub holds links
	h.file("f0", "f0")
	h.dir("d0")
	h.file("d0/c0", "d0/c0")
	h.dir("sub")
	src(k, "s")
	dst(k, strings.TrimSuffix(to, "/"))
}

// describe lists the tree of fsys below its root, a line an entry: a
// file with its content, a directory, a link with its target.
func describe(t *testing.T, fsys experimentalsys.FS) string {
	var lines []string
	var walk func(dir string)
	walk = func(dir string) {
		d, e := fsys.OpenFile(dir, experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
		if e != 0 {
			t.Fatalf("open %s: %v", dir, e)
		}
		ents, e := d.Readdir(-1)
		d.Close()
		if e != 0 {
			t.Fatalf("readdir %s: %v", dir, e)
		}
		slices.SortFunc(ents, func(a, b experimentalsys.Dirent) int { return strings.Compare(a.Name, b.Name) })
		for _, en := range ents {
			p := path.Join(dir, en.Name)
			st, e := fsys.Lstat(p)
			if e != 0 {
				t.Fatalf("lstat %s: %v", p, e)
			}
			switch {
			case st.Mode&fs.ModeSymlink != 0:
				target, e := fsys.Readlink(p)
				if e != 0 {
					t.Fatalf("readlink %s: %v", p, e)
				}
				lines = append(lines, p+" -> "+target)
			case st.Mode.IsDir():
				lines = append(lines, p+"/")
				walk(p)
			case st.Mode&fs.ModeNamedPipe != 0:
				lines = append(lines, p+" fifo")
			default:
				f, e := fsys.OpenFile(p, experimentalsys.O_RDONLY, 0)
				if e != 0 {
					t.Fatalf("open %s: %v", p, e)
				}
				b := make([]byte, 64)
				n, _ := f.Read(b)
				f.Close()
				lines = append(lines, fmt.Sprintf("%s %q", p, b[:n]))
			}
		}
	}
	walk(".")
	return strings.Join(lines, "\n")
}

// describeHost is describe of the host directory dir, read by the host's
// own system calls: the oracle's side.
func describeHost(t *testing.T, dir string) string {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			lines = append(lines, rel+" -> "+target)
			return err
		case d.IsDir():
			lines = append(lines, rel+"/")
			return nil
		case d.Type()&fs.ModeNamedPipe != 0:
			lines = append(lines, rel+" fifo")
			return nil
		}
		b, err := os.ReadFile(p)
		lines = append(lines, fmt.Sprintf("%s %q", rel, b))
		return err
	})
	must(t, err)
	return strings.Join(lines, "\n")
}
