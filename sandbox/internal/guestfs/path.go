package guestfs

import (
	"strings"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// The longest path a guest may name, and the longest name in it, in
// bytes: Linux's PATH_MAX (which counts a terminating NUL) and NAME_MAX.
// Past either a path is refused with ENAMETOOLONG, as the kernel refuses
// it, before any work in proportion to it: resolving a path costs the
// host a step and a string for each of its names, outside the guest's
// memory limit and out of reach of the call's deadline.
const (
	MaxPath = 4096
	MaxName = 255
)

// CheckPath refuses a path as a guest names it (as wazero hands it over:
// one leading slash may be wazero's joining) that is MaxPath bytes long
// or more, or holds a name longer than MaxName bytes: ENAMETOOLONG. It
// reads at most MaxPath bytes of p.
func CheckPath(p string) experimentalsys.Errno {
	p = strings.TrimPrefix(p, "/")
	if len(p) >= MaxPath {
		return experimentalsys.ENAMETOOLONG
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			n = 0
		} else if n++; n > MaxName {
			return experimentalsys.ENAMETOOLONG
		}
	}
	return 0
}

// name is the os.Root name of a guest path relative to the mount, or
// ENAMETOOLONG (see CheckPath).
func name(path string) (string, experimentalsys.Errno) {
	if e := CheckPath(path); e != 0 {
		return "", e
	}
	return rel(path), 0
}

// rel is the os.Root name of a path relative to the mount. wazero names a
// directory opened at a mount's root "", and joins a path under it as
// "/" + path: such a path is still relative to the mount (a guest's own
// absolute path never reaches a filesystem, wazero refuses it), so leading
// slashes are dropped rather than refused. os.Root then confines the rest,
// ".." and symlinks included.
func rel(path string) string {
	path = strings.TrimLeft(path, "/")
	if path == "" {
		return "."
	}
	return path
}
