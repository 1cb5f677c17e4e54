package guestfs

import (
	"path"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"
)

// renameOverDir renames from onto the existing directory to: rename(2)
// itself, on the two parent directories opened through the mount's root,
// so that it replaces an empty directory and refuses a non-empty one
// (ENOTEMPTY) or a file over a directory (EISDIR). Only the last element of
// each path is named to the kernel, and one that would leave its parent
// ("." or "..") is refused.
func (w *Dir) renameOverDir(from, to string) experimentalsys.Errno {
	fromDir, fromBase := path.Split(path.Clean(from))
	toDir, toBase := path.Split(path.Clean(to))
	for _, b := range []string{fromBase, toBase} {
		if b == "." || b == ".." || b == "" {
			return experimentalsys.EINVAL
		}
	}
	src, err := w.Root.Open(rel(fromDir))
	if err != nil {
		return Errno(err)
	}
	defer src.Close()
	dst, err := w.Root.Open(rel(toDir))
	if err != nil {
		return Errno(err)
	}
	defer dst.Close()
	return Errno(unix.Renameat(int(src.Fd()), fromBase, int(dst.Fd()), toBase))
}
