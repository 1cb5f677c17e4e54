package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/tetratelabs/wazero/api"
)

// dotted is a WASI function taking paths that first checks their "." and
// ".." names as Linux resolves them. wazero cleans a guest's path by its
// letters before a filesystem sees it ("f/.." is ".", "missing/." is
// "missing"), where Linux walks it: the name before each "." or ".."
// must be a directory, or a symlink to one (ENOENT when nothing is there,
// ENOTDIR when something else is). A symlink before ".." is refused
// (EPERM): Linux goes up from where it leads, wazero's cleaning from where
// it is. A path whose last name is a dot names a directory that is there:
// path_remove_directory of one is EINVAL ("d/.") or ENOTEMPTY ("d/..",
// which holds d), path_rename of one EINVAL, as POSIX says (Linux says
// EBUSY), and path_readlink EINVAL; every other function answers as for
// the directory wazero's cleaned path names. A path of guestfs.MaxPath
// bytes or more is ENAMETOOLONG at once, as Linux says past PATH_MAX,
// whatever it cleans to.
type dotted struct {
	fn    api.GoModuleFunction
	stat  api.GoModuleFunction // wazero's path_filestat_get
	paths [][3]int             // the indexes of each path's fd, pointer and length
	name  string
}

// pathParams are the parameters naming each path of the WASI functions
// dotted checks: its directory's descriptor, its pointer, its length.
var pathParams = map[string][][3]string{
	"path_create_directory":   {{"fd", "path", "path_len"}},
	"path_filestat_get":       {{"fd", "path", "path_len"}},
	"path_filestat_set_times": {{"fd", "path", "path_len"}},
	"path_open":               {{"fd", "path", "path_len"}},
	"path_readlink":           {{"fd", "path", "path_len"}},
	"path_remove_directory":   {{"fd", "path", "path_len"}},
	"path_rename":             {{"fd", "old_path", "old_path_len"}, {"new_fd", "new_path", "new_path_len"}},
	"path_unlink_file":        {{"fd", "path", "path_len"}},
}

// newDotted is dotted of wazero's function name (fn, with params).
func newDotted(name string, fn, stat api.GoModuleFunction, params []string) (dotted, error) {
	d := dotted{fn: fn, stat: stat, name: name}
	for _, p := range pathParams[name] {
		var at [3]int
		for i, param := range p {
			if at[i] = slices.Index(params, param); at[i] < 0 {
				return dotted{}, fmt.Errorf("wazero's %s has no parameter %s", name, param)
			}
		}
		d.paths = append(d.paths, at)
	}
	return d, nil
}

// WASI preview 1's errnos dotted answers, and the filetypes it looks at.
const (
	errnoNotdir      = 54
	errnoNotempty    = 55
	errnoPerm        = 63
	filetypeSymlink  = 7
	lookupFollowLink = 1
)

// Call implements api.GoModuleFunction.
func (d dotted) Call(ctx context.Context, mod api.Module, stack []uint64) {
	mem := mod.Memory()
	for _, at := range d.paths {
		if uint32(stack[at[2]]) >= guestfs.MaxPath {
			// Linux's answer to a path past PATH_MAX, before anything is
			// done in proportion to it: wazero would copy and clean it,
			// and checking its dots costs a stat each.
			stack[0] = errnoNametoolong
			return
		}
		if mem == nil {
			break // wazero's own answers a module without memory
		}
		p, ok := mem.Read(uint32(stack[at[1]]), uint32(stack[at[2]]))
		if !ok || !hasDots(p) {
			continue
		}
		if errno := d.walk(ctx, mod, stack[at[0]], string(p)); errno != 0 {
			stack[0] = errno
			return
		}
		if last := lastName(string(p)); last == "." || last == ".." {
			switch {
			case d.name == "path_remove_directory" && last == "..":
				stack[0] = errnoNotempty
				return
			case d.name == "path_remove_directory", d.name == "path_rename", d.name == "path_readlink":
				stack[0] = errnoInval
				return
			}
		}
	}
	d.fn.Call(ctx, mod, stack)
}

// walk checks the name before each "." and ".." of p, a path under fd.
func (d dotted) walk(ctx context.Context, mod api.Module, fd uint64, p string) uint64 {
	var names []string
	for _, name := range strings.Split(p, "/") {
		switch {
		case name == "":
		case name != "." && name != "..":
			names = append(names, name)
		case len(names) > 0:
			dir := strings.Join(names, "/")
			if errno := d.isDir(ctx, mod, fd, dir, name == ".."); errno != 0 {
				return errno
			}
			if name == ".." {
				names = names[:len(names)-1]
			}
		}
	}
	return 0
}

// isDir answers whether dir, under fd, is a directory "." or (up) ".."
// may follow, with wazero's path_filestat_get.
func (d dotted) isDir(ctx context.Context, mod api.Module, fd uint64, dir string, up bool) uint64 {
	typeOf := func(flags uint64) (byte, uint64) {
		var filetype byte
		errno := scratch(mod, uint32(64+len(dir)), func(mem api.Memory) uint64 {
			mem.Write(64, []byte(dir))
			stack := []uint64{fd, flags, 64, uint64(len(dir)), 0}
			d.stat.Call(ctx, mod, stack)
			filetype, _ = mem.ReadByte(16)
			return stack[0]
		})
		return filetype, errno
	}
	if up {
		if t, errno := typeOf(0); errno == 0 && t == filetypeSymlink {
			return errnoPerm
		}
	}
	switch t, errno := typeOf(lookupFollowLink); {
	case errno != 0:
		return errno
	case t != filetypeDirectory:
		return errnoNotdir
	}
	return 0
}

// hasDots reports whether a name of the path p is "." or "..".
func hasDots(p []byte) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '.' && (i == 0 || p[i-1] == '/') {
			j := i + 1
			if j < len(p) && p[j] == '.' {
				j++
			}
			if j == len(p) || p[j] == '/' {
				return true
			}
		}
	}
	return false
}

// lastName is the last name of a path, "" for none.
func lastName(p string) string {
	p = strings.TrimRight(p, "/")
	return p[strings.LastIndex(p, "/")+1:]
}
