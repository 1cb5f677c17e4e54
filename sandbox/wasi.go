package sandbox

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// instantiateWASI adds WASI preview 1 to a runtime: wazero's functions,
// but those cairn has its own of: fd_renumber (renumbering),
// fd_prestat_dir_name (prestatName), fd_allocate (allocating),
// poll_oneoff (polling), clock_res_get and clock_time_get of the
// CPU clocks (cpuClocks), fd_filestat_set_times and
// path_filestat_set_times of flags WASI has not (timing), and without
// LOOKUP_SYMLINK_FOLLOW (notFollowing), path_filestat_get,
// path_filestat_set_times and path_link of lookupflags WASI has not
// (lookingUp), fd_seek, fd_tell, fd_pread and fd_pwrite of
// stdio (unseekable), fd_write, fd_pwrite and fd_filestat_set_size of
// a directory (dirWriting), path_readlink (readlinking), path_rename across
// mounts (crossRenaming), path_symlink of an empty text
// (linkText), fd_readdir from a cookie wazero's has not
// kept (readdirring), the path functions' "." and ".." (dotted), the
// pointers of those that act and then answer (faulting), and
// those that keep and report descriptors' rights (fd_fdstat_get,
// fd_fdstat_set_rights, path_open, fd_close: see descriptors). Every
// function acting through a descriptor first checks the rights it needs
// of it (rightsNeeded, checked), and before that has the guest's
// descriptor translated to wazero's, for the stdio the guest moved
// (withMoves); one taking paths relative to descriptors tells the
// filesystems which directory each is relative to (anchoring). Every fd_
// and path_ function answers the errnos of the
// host's filesystem that wazero's set has no name for (naming).
func instantiateWASI(ctx context.Context, rt wazero.Runtime, fds *descriptors) error {
	b := rt.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	defs, err := wazeroWASI(ctx, b)
	if err != nil {
		return fmt.Errorf("instantiate WASI: %w", err)
	}
	theirs := func(name string) api.GoModuleFunction {
		return defs[name].GoFunction().(api.GoModuleFunction)
	}
	stat := fdstat{get: theirs("fd_fdstat_get"), fds: fds}
	renumber := renumbering{renumber: theirs("fd_renumber"), advise: theirs("fd_advise"),
		close: theirs("fd_close"), prestat: theirs("fd_prestat_get"), fds: fds}
	ours := map[string]api.GoModuleFunction{
		"fd_renumber":          renumber,
		"fd_prestat_dir_name":  prestatName{get: theirs("fd_prestat_get"), name: theirs("fd_prestat_dir_name")},
		"fd_allocate":          allocating{allocate: theirs("fd_allocate"), fdstat: theirs("fd_fdstat_get")},
		"fd_advise":            advising{advise: theirs("fd_advise")},
		"fd_fdstat_get":        stat,
		"fd_fdstat_set_rights": settingRights{stat: stat},
		"path_open":            opening{open: theirs("path_open"), fdstat: theirs("fd_fdstat_get"), fds: fds},
		"fd_close":             closing{close: theirs("fd_close"), fds: fds},
		"poll_oneoff":          polling{poll: theirs("poll_oneoff"), advise: theirs("fd_advise"), clock: theirs("clock_time_get"), fds: fds},
		"path_readlink":        readlinking{readlink: theirs("path_readlink")},
		"path_rename":          crossRenaming{rename: theirs("path_rename")},
		"path_symlink":         linkText{symlink: theirs("path_symlink")},
		"fd_readdir":           readdirring{readdir: theirs("fd_readdir")},
		"clock_res_get":        cpuClocks{fn: theirs("clock_res_get")},
		"clock_time_get":       cpuClocks{fn: theirs("clock_time_get")},
	}
	for name, flags := range map[string]int{"fd_filestat_set_times": 3, "path_filestat_set_times": 6} {
		if defs[name].ParamNames()[flags] != "fst_flags" {
			return fmt.Errorf("instantiate WASI: wazero's %s has no fst_flags at %d", name, flags)
		}
		ours[name] = timing{set: theirs(name), flags: flags}
	}
	ours["path_filestat_set_times"] = timing{flags: 6,
		set: notFollowing{set: theirs("path_filestat_set_times"), stat: theirs("path_filestat_get")}}
	for name, flags := range map[string]int{"path_filestat_get": 1, "path_filestat_set_times": 1, "path_link": 1} {
		if p := defs[name].ParamNames()[flags]; p != "flags" && p != "old_flags" {
			return fmt.Errorf("instantiate WASI: wazero's %s has no lookupflags at %d", name, flags)
		}
		fn, ok := ours[name]
		if !ok {
			fn = theirs(name)
		}
		ours[name] = lookingUp{fn: fn, flags: flags}
	}
	for _, name := range []string{"fd_seek", "fd_tell", "fd_pread", "fd_pwrite"} {
		ours[name] = unseekable{fn: theirs(name), fdstat: theirs("fd_fdstat_get")}
	}
	ours["fd_write"] = dirWriting{fn: theirs("fd_write"), errno: errnoBadf}
	ours["fd_pwrite"] = dirWriting{fn: ours["fd_pwrite"], errno: errnoBadf}
	ours["fd_filestat_set_size"] = dirWriting{fn: theirs("fd_filestat_set_size"), errno: errnoInval}
	for name := range pathParams {
		fn, ok := ours[name]
		if !ok {
			fn = theirs(name)
		}
		if ours[name], err = newDotted(name, fn, theirs("path_filestat_get"), theirs("path_readlink"), defs[name].ParamNames()); err != nil {
			return fmt.Errorf("instantiate WASI: %w", err)
		}
	}
	for name := range faultParams {
		fn, ok := ours[name]
		if !ok {
			fn = theirs(name)
		}
		if ours[name], err = newFaulting(name, fn, theirs("fd_fdstat_get"), defs[name].ParamNames()); err != nil {
			return fmt.Errorf("instantiate WASI: %w", err)
		}
	}
	for name, needs := range rightsNeeded {
		needs, err := needsOf(name, needs, defs[name].ParamNames())
		if err != nil {
			return fmt.Errorf("instantiate WASI: %w", err)
		}
		fn, ok := ours[name]
		if !ok {
			fn = theirs(name)
		}
		ours[name] = checked{fn: fn, fds: fds, needs: needs}
	}
	ours["fd_seek"] = checked{fn: ours["fd_seek"], fds: fds, seek: true}
	for name := range anchorParams {
		fn, ok := ours[name]
		if !ok {
			fn = theirs(name)
		}
		if ours[name], err = newAnchoring(name, fn, fds, defs[name].ParamNames()); err != nil {
			return fmt.Errorf("instantiate WASI: %w", err)
		}
	}
	withMoves(ours, defs, theirs, renumber, &fds.moves)
	for name := range defs {
		if strings.HasPrefix(name, "fd_") || strings.HasPrefix(name, "path_") {
			fn, ok := ours[name]
			if !ok {
				fn = theirs(name)
			}
			ours[name] = naming{fn: fn}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(ours)) {
		def := defs[name]
		b.NewFunctionBuilder().
			WithGoModuleFunction(ours[name], def.ParamTypes(), def.ResultTypes()).
			WithParameterNames(def.ParamNames()...).WithResultNames(def.ResultNames()...).
			Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate WASI: %w", err)
	}
	return nil
}

// wazeroWASI returns wazero's own functions from b, which holds wazero's
// WASI functions, before cairn's replace any.
func wazeroWASI(ctx context.Context, b wazero.HostModuleBuilder) (map[string]api.FunctionDefinition, error) {
	cm, err := b.Compile(ctx)
	if err != nil {
		return nil, err
	}
	defer cm.Close(ctx)
	defs := cm.ExportedFunctions()
	for name, def := range defs {
		if _, ok := def.GoFunction().(api.GoModuleFunction); !ok {
			return nil, fmt.Errorf("wazero's %s is not a Go function", name)
		}
	}
	return defs, nil
}

// naming is a WASI function that answers the errno of the host's
// filesystem it met, where wazero's answers EIO: ENOSPC, EDQUOT, EFBIG and
// the other errnos of the system that wazero's set lacks and WASI names
// (and EMFILE past the call's budget of open files, which wazero's set
// answers as EAGAIN), as the call's filesystems tell it (see
// guestfs.Unnamed, which the call's context carries).
type naming struct{ fn api.GoModuleFunction }

// Call implements api.GoModuleFunction.
func (n naming) Call(ctx context.Context, mod api.Module, stack []uint64) {
	u := guestfs.UnnamedOf(ctx)
	if u == nil {
		n.fn.Call(ctx, mod, stack)
		return
	}
	u.Clear()
	n.fn.Call(ctx, mod, stack)
	stack[0] = u.Answer(stack[0])
	u.Clear()
}

// dirWriting is fd_write, fd_pwrite or fd_filestat_set_size answering
// errno for a directory, as Linux answers of one, which is never open
// for writing: EBADF for write(2) and pwrite(2), EINVAL for ftruncate(2).
// wazero's directory of a preopen, which cairn's filesystems do not make,
// answers EISDIR, and EISDIR is what these answer of a directory alone.
type dirWriting struct {
	fn    api.GoModuleFunction
	errno uint64
}

// Call implements api.GoModuleFunction.
func (d dirWriting) Call(ctx context.Context, mod api.Module, stack []uint64) {
	d.fn.Call(ctx, mod, stack)
	if stack[0] == errnoIsdir {
		stack[0] = d.errno
	}
}

// cpuClocks is clock_res_get or clock_time_get answering the clocks of
// the process's and the thread's CPU time (ids 2 and 3), which wazero's
// has not (EINVAL), with the instance's monotonic clock: its resolution
// and its reading. A guest is one thread, and the time it has run is
// taken as the time that has passed, waiting included, which CPU time
// would not count; as with any CPU clock, a guest measures by the
// difference of two readings (wasi-libc's clock() subtracts its first
// reading). It is the fixed clock's, advancing with it, unless the
// policy grants the real clock, and tells a guest nothing the monotonic
// clock does not. poll_oneoff does not wait on them (see polling).
type cpuClocks struct{ fn api.GoModuleFunction }

// WASI preview 1's clock ids.
const (
	clockMonotonic  = 1
	clockProcessCPU = 2
	clockThreadCPU  = 3
)

// Call implements api.GoModuleFunction.
func (c cpuClocks) Call(ctx context.Context, mod api.Module, stack []uint64) {
	if id := uint32(stack[0]); id == clockProcessCPU || id == clockThreadCPU {
		stack[0] = clockMonotonic
	}
	c.fn.Call(ctx, mod, stack)
}

// linkText is path_symlink answering ENOENT for an empty link text, as
// symlinkat(2) does on Linux, where wazero's said EINVAL. (cairn makes no
// symlink: the filesystems answer what Linux does of the link's name,
// then refuse it; see guestfs.Unmade.)
type linkText struct{ symlink api.GoModuleFunction }

// Call implements api.GoModuleFunction.
func (l linkText) Call(ctx context.Context, mod api.Module, stack []uint64) {
	if uint32(stack[1]) == 0 { // old_path_len
		stack[0] = errnoNoent
		return
	}
	l.symlink.Call(ctx, mod, stack)
}
