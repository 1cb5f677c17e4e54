package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/tetratelabs/wazero/api"
)

// dotted is a WASI function taking paths that first walks their "." and
// ".." names as Linux walks them. wazero cleans a guest's path by its
// letters before a filesystem sees it ("f/.." is ".", "missing/."
// "missing", "link/.." the directory holding link), where Linux walks it:
// the name before each "." or ".." must be a directory, or a symlink to
// one (ENOENT when nothing is there, ENOTDIR when something else is), and
// a symlink there is followed first, so that ".." goes up from where it
// leads and "." stays there. When a path has such a symlink, dotted hands
// the function the path with each one replaced by the text it leads to,
// walked in turn (see resolve), which wazero's cleaning then leaves as it
// is; every other path is handed over as the guest gave it. The walk
// never leaves the descriptor's directory: a ".." past it, or a link by
// its absolute name, is EPERM, as os.Root and wazero refuse them, and
// what the path names at last is still resolved by os.Root. A path whose
// last name is a dot names a directory that is there:
// path_remove_directory of one is EINVAL ("d/.") or ENOTEMPTY ("d/..",
// which holds d), path_rename of one EINVAL, as POSIX says (Linux says
// EBUSY), and path_readlink EINVAL; every other function answers as for
// the directory it names. An empty path is ENOENT, as Linux says (wazero
// cleaned it to "."). A path of guestfs.MaxPath bytes or more is
// ENAMETOOLONG at once, as Linux says past PATH_MAX, whatever it cleans
// to, and so is one whose links make it that long.
type dotted struct {
	fn       api.GoModuleFunction
	stat     api.GoModuleFunction // wazero's path_filestat_get
	readlink api.GoModuleFunction // wazero's path_readlink
	paths    [][3]int             // the indexes of each path's fd, pointer and length
	outs     [][2]int             // the indexes of each answer's pointer, and of its length (-1: lengths of outLen)
	name     string
}

// pathParams are the parameters naming each path of the WASI functions
// dotted checks: its directory's descriptor, its pointer, its length.
var pathParams = map[string][][3]string{
	"path_create_directory":   {{"fd", "path", "path_len"}},
	"path_filestat_get":       {{"fd", "path", "path_len"}},
	"path_filestat_set_times": {{"fd", "path", "path_len"}},
	"path_link":               {{"old_fd", "old_path", "old_path_len"}, {"new_fd", "new_path", "new_path_len"}},
	"path_open":               {{"fd", "path", "path_len"}},
	"path_readlink":           {{"fd", "path", "path_len"}},
	"path_remove_directory":   {{"fd", "path", "path_len"}},
	"path_rename":             {{"fd", "old_path", "old_path_len"}, {"new_fd", "new_path", "new_path_len"}},
	"path_symlink":            {{"fd", "new_path", "new_path_len"}}, // its old_path is the link's text
	"path_unlink_file":        {{"fd", "path", "path_len"}},
}

// outParams are the answers of the functions dotted checks that are
// written to the guest's memory: each its pointer's parameter and its
// length, a number of bytes or the parameter holding the pointer to it.
var outParams = map[string][]struct {
	at  string
	len any
}{
	"path_filestat_get": {{"result.filestat", 64}},
	"path_open":         {{"result.opened_fd", 4}},
	"path_readlink":     {{"result.bufused", 4}, {"buf", "result.bufused"}},
}

// newDotted is dotted of wazero's function name (fn, with params).
func newDotted(name string, fn, stat, readlink api.GoModuleFunction, params []string) (dotted, error) {
	d := dotted{fn: fn, stat: stat, readlink: readlink, name: name}
	for _, o := range outParams[name] {
		at, n := slices.Index(params, o.at), -1
		if l, ok := o.len.(string); ok {
			n = -2 - slices.Index(params, l)
		} else {
			n = o.len.(int)
		}
		if at < 0 || n == -1 {
			return dotted{}, fmt.Errorf("wazero's %s has no parameter %s or %v", name, o.at, o.len)
		}
		d.outs = append(d.outs, [2]int{at, n})
	}
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
	errnoNotdir     = 54
	errnoNotempty   = 55
	errnoPerm       = 63
	errnoLoop       = 32
	filetypeSymlink = 7
)

// Call implements api.GoModuleFunction.
func (d dotted) Call(ctx context.Context, mod api.Module, stack []uint64) {
	mem := mod.Memory()
	var resolved []string // each path as it is handed over; nil: as the guest gave them
	for _, at := range d.paths {
		if uint32(stack[at[2]]) == 0 {
			// Linux's answer to an empty path, which wazero's cleaning
			// made "." (the directory it is under).
			stack[0] = errnoNoent
			return
		}
	}
	for i, at := range d.paths {
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
		b, ok := mem.Read(uint32(stack[at[1]]), uint32(stack[at[2]]))
		if !ok || !hasDots(b) {
			continue
		}
		p := string(b)
		r, linked, errno := d.resolve(ctx, mod, stack[at[0]], p)
		if errno != 0 {
			stack[0] = errno
			return
		}
		if linked {
			if resolved == nil {
				resolved = make([]string, len(d.paths))
			}
			resolved[i] = r
		}
		if last := lastName(p); last == "." || last == ".." {
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
	if resolved == nil {
		d.fn.Call(ctx, mod, stack)
		return
	}
	d.callResolved(ctx, mod, stack, resolved)
}

// callResolved calls the function with the paths of resolved that are
// not "" in place of the guest's, and copies of the guest's own for the
// others, written to the top 2 * MaxPath bytes of its memory for the call
// and put back after it, but for the answers the call wrote there (outs).
func (d dotted) callResolved(ctx context.Context, mod api.Module, stack []uint64, resolved []string) {
	mem := mod.Memory()
	const n = 2 * guestfs.MaxPath
	size := mem.Size()
	if size < n+walkBuf+64 {
		stack[0] = errnoFault // a memory so small holds no path with a dot
		return
	}
	base := size - n
	// A path handed over as the guest gave it is copied too: it may be
	// in the borrowed bytes.
	for i, at := range d.paths {
		if resolved[i] != "" {
			continue
		}
		if b, ok := mem.Read(uint32(stack[at[1]]), uint32(stack[at[2]])); ok {
			resolved[i] = string(b)
		}
	}
	b, _ := mem.Read(base, n)
	saved := append([]byte(nil), b...)
	for i, r := range resolved {
		if r == "" {
			continue // past the end of memory: the function answers EFAULT
		}
		at := base + uint32(i)*guestfs.MaxPath
		mem.WriteString(at, r)
		stack[d.paths[i][1]], stack[d.paths[i][2]] = uint64(at), uint64(len(r))
	}
	d.fn.Call(ctx, mod, stack)
	// The answers, where they fall in the borrowed bytes, are kept.
	var kept [][2]uint32
	if stack[0] == 0 {
		for _, o := range d.outs {
			p, l := uint32(stack[o[0]]), uint32(o[1])
			if o[1] < -1 {
				l, _ = mem.ReadUint32Le(uint32(stack[-2-o[1]]))
			}
			kept = append(kept, [2]uint32{p, l})
		}
	}
	for i := uint32(0); i < n; i++ {
		if !within(base+i, kept) {
			mem.WriteByte(base+i, saved[i])
		}
	}
}

// within reports whether the address p is in one of spans (pointer,
// length).
func within(p uint32, spans [][2]uint32) bool {
	for _, s := range spans {
		if uint64(p) >= uint64(s[0]) && uint64(p) < uint64(s[0])+uint64(s[1]) {
			return true
		}
	}
	return false
}

// maxLinks is how many symlinks resolve follows in one path before it
// answers ELOOP, as Linux does past 40.
const maxLinks = 40

// resolve walks p, a path under fd, as Linux walks it: it checks the name
// before each "." and ".." (see isDir), and where that name is a symlink
// it follows it first, putting the link's text in its place. It returns
// the path to hand over, with the dots walked and no name in it, and
// whether it followed a link; without one the guest's own path is handed
// over, which wazero cleans to the same. A ".." past fd's directory is
// EPERM (wazero's answer to "../x"), and so is a link by its absolute
// name (os.Root's); more than maxLinks links are ELOOP; a path that its
// links make guestfs.MaxPath bytes long or more, ENAMETOOLONG.
func (d dotted) resolve(ctx context.Context, mod api.Module, fd uint64, p string) (string, bool, uint64) {
	queue := strings.Split(p, "/")
	var names []string
	links, size := 0, len(p)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		switch {
		case name == "":
		case name != "." && name != "..":
			names = append(names, name)
		case len(names) == 0:
			if name == ".." {
				return "", false, errnoPerm
			}
		default:
			dir := strings.Join(names, "/")
			link, isLink, errno := d.isDir(ctx, mod, fd, dir)
			switch {
			case errno != 0:
				return "", false, errno
			case isLink:
				if links++; links > maxLinks {
					return "", false, errnoLoop
				}
				if strings.HasPrefix(link, "/") {
					return "", false, errnoPerm
				}
				if size += len(link); size >= guestfs.MaxPath {
					return "", false, errnoNametoolong
				}
				names = names[:len(names)-1]
				queue = append(append(strings.Split(link, "/"), name), queue...)
			case name == "..":
				names = names[:len(names)-1]
			}
		}
	}
	if links == 0 {
		return p, false, 0
	}
	r := strings.Join(names, "/")
	if r == "" {
		r = "."
	}
	if strings.HasSuffix(p, "/") {
		r += "/"
	}
	return r, true, 0
}

// isDir answers whether dir, under fd, is a directory a "." or ".." may
// follow (errno 0), or a symlink, whose text it returns (a link there
// is followed first), with wazero's path_filestat_get and path_readlink.
// Anything else is ENOTDIR, nothing there ENOENT.
func (d dotted) isDir(ctx context.Context, mod api.Module, fd uint64, dir string) (string, bool, uint64) {
	var filetype byte
	errno := scratch(mod, uint32(64+len(dir)), func(mem api.Memory) uint64 {
		mem.Write(64, []byte(dir))
		stack := []uint64{fd, 0, 64, uint64(len(dir)), 0}
		d.stat.Call(ctx, mod, stack)
		filetype, _ = mem.ReadByte(16)
		return stack[0]
	})
	switch {
	case errno != 0:
		return "", false, errno
	case filetype == filetypeDirectory:
		return "", false, 0
	case filetype != filetypeSymlink:
		return "", false, errnoNotdir
	}
	var link []byte
	errno = scratch(mod, uint32(4+len(dir)+maxLink), func(mem api.Memory) uint64 {
		mem.Write(4, []byte(dir))
		stack := []uint64{fd, 4, uint64(len(dir)), uint64(4 + len(dir)), maxLink, 0}
		d.readlink.Call(ctx, mod, stack)
		n, _ := mem.ReadUint32Le(0)
		b, _ := mem.Read(uint32(4+len(dir)), n)
		link = append(link, b...)
		return stack[0]
	})
	if errno == 0 && len(link) == 0 {
		errno = errnoNoent // Linux's answer to a link with no text
	}
	return string(link), true, errno
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
