package overlay

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// pathOps are the calls on one path that pathLinux compares with Linux:
// each as a mount answers it and as Linux does on a host directory.
var pathOps = []struct {
	name  string
	cairn func(fsys experimentalsys.FS, p string) experimentalsys.Errno
	linux func(p string) error
}{
	{"unlink", func(fsys experimentalsys.FS, p string) experimentalsys.Errno { return fsys.Unlink(p) }, syscall.Unlink},
	{"rmdir", func(fsys experimentalsys.FS, p string) experimentalsys.Errno { return fsys.Rmdir(p) }, syscall.Rmdir},
	{"mkdir", func(fsys experimentalsys.FS, p string) experimentalsys.Errno { return fsys.Mkdir(p, 0o755) },
		func(p string) error { return syscall.Mkdir(p, 0o755) }},
	{"stat", func(fsys experimentalsys.FS, p string) experimentalsys.Errno { _, e := fsys.Stat(p); return e },
		func(p string) error { var st syscall.Stat_t; return syscall.Stat(p, &st) }},
	{"lstat", func(fsys experimentalsys.FS, p string) experimentalsys.Errno { _, e := fsys.Lstat(p); return e },
		func(p string) error { var st syscall.Stat_t; return syscall.Lstat(p, &st) }},
	{"readlink", func(fsys experimentalsys.FS, p string) experimentalsys.Errno { _, e := fsys.Readlink(p); return e },
		func(p string) error { _, err := os.Readlink(p); return err }},
	openOp("open", experimentalsys.O_RDONLY, syscall.O_RDONLY),
	openOp("open dir", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, syscall.O_RDONLY|syscall.O_DIRECTORY),
	openOp("open nofollow", experimentalsys.O_RDONLY|experimentalsys.O_NOFOLLOW, syscall.O_RDONLY|syscall.O_NOFOLLOW),
	openOp("open dir nofollow", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY|experimentalsys.O_NOFOLLOW, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW),
	openOp("open write", experimentalsys.O_WRONLY, syscall.O_WRONLY),
	openOp("open write nofollow", experimentalsys.O_WRONLY|experimentalsys.O_NOFOLLOW, syscall.O_WRONLY|syscall.O_NOFOLLOW),
	openOp("open append", experimentalsys.O_APPEND, syscall.O_APPEND),
	openOp("open trunc", experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, syscall.O_WRONLY|syscall.O_TRUNC),
	openOp("create", experimentalsys.O_WRONLY|experimentalsys.O_CREAT, syscall.O_WRONLY|syscall.O_CREAT),
	openOp("create excl", experimentalsys.O_WRONLY|experimentalsys.O_CREAT|experimentalsys.O_EXCL, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL),
}

func openOp(name string, flag experimentalsys.Oflag, linux int) struct {
	name  string
	cairn func(fsys experimentalsys.FS, p string) experimentalsys.Errno
	linux func(p string) error
} {
	return struct {
		name  string
		cairn func(fsys experimentalsys.FS, p string) experimentalsys.Errno
		linux func(p string) error
	}{
		name,
		func(fsys experimentalsys.FS, p string) experimentalsys.Errno {
			f, e := fsys.OpenFile(p, flag, 0o644)
			if e == 0 {
				f.Close()
			}
			return e
		},
		func(p string) error {
			fd, err := syscall.Open(p, linux|syscall.O_NONBLOCK, 0o644)
			if err == nil {
				syscall.Close(fd)
			}
			return err
		},
	}
}

// Each call on one path answers as Linux answers, on a plain mount and
// on an overlay, for every kind of entry at the path (see renameKinds),
// with and without a trailing slash, and leaves the tree as Linux leaves
// it, but for what cairn refuses by design (docs/threat-model.md): a
// FIFO is not opened (EACCES), and an overlay removes no workspace
// symlink and writes through none (EPERM).
func TestPathCallsAnswerAsLinux(t *testing.T) {
	for _, kind := range renameKinds {
		for _, op := range pathOps {
			for _, p := range []string{"s", "s/", "sub/s"} {
				name := fmt.Sprintf("%s %s %q", op.name, kind.name, p)
				linux := t.TempDir()
				fixture(renameMaker{t: t, host: linux}, nothing, kind.make, p)
				wantErr := experimentalsys.UnwrapOSError(op.linux(linux + "/" + p))
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
					fixture(k, nothing, kind.make, p)
					gotErr := op.cairn(fsys, p)
					if wantErr == experimentalsys.EIO && kind.name == "fifo" {
						wantErr = 0 // ENXIO: no reader, where an open that may block would wait for one
					}
					if refused := refusedOp(mount, kind.name, op.name); wantErr == 0 && refused != 0 {
						if gotErr != refused {
							t.Errorf("%s: %s: %v, want %v (Linux does it, cairn refuses it by design)", mount, name, gotErr, refused)
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

func nothing(renameMaker, string) {}

// refusedOp is what cairn answers by design, on mount, of op on an entry
// of kind that Linux does; zero where cairn does it as Linux does.
func refusedOp(mount, kind, op string) experimentalsys.Errno {
	switch {
	case kind == "fifo" && strings.HasPrefix(op, "open") || kind == "fifo" && strings.HasPrefix(op, "create"):
		return experimentalsys.EACCES
	case mount != "plain" && kind == "fifo" && op == "unlink":
		return experimentalsys.EACCES
	case mount == "plain" || !strings.HasPrefix(kind, "link") && kind != "dangling link":
		return 0
	case op == "open append" && kind == "link to dir": // opened to read, as open(2) does
		return 0
	case op == "unlink" || op == "open append" || strings.Contains(op, "write") || strings.Contains(op, "trunc") || strings.HasPrefix(op, "create"):
		return experimentalsys.EPERM
	}
	return 0
}
