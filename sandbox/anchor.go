package sandbox

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/tetratelabs/wazero/api"
)

// anchoring is a WASI function taking paths relative to descriptors that
// tells the call's filesystems which directory, of those the guest opened,
// each of its paths is relative to (guestfs.Dirs.Using), so that a path
// reaches the directory the descriptor was opened on wherever it has been
// renamed since, as on Linux (see guestfs.Anchor), where wazero's joined
// it to the name the directory was opened by.
type anchoring struct {
	fn  api.GoModuleFunction
	fds *descriptors
	at  []int // the indexes of its descriptors, by the order of their paths
}

// anchorParams are, for each function anchoring wraps, its parameters
// naming the descriptors its paths are relative to, in the order of the
// paths. fd_filestat_set_times is among them: wazero's sets the times of
// a file it cannot set through its descriptor by the name it opened it by.
var anchorParams = map[string][]string{
	"path_create_directory":   {"fd"},
	"path_filestat_get":       {"fd"},
	"path_filestat_set_times": {"fd"},
	"path_link":               {"old_fd", "new_fd"},
	"path_open":               {"fd"},
	"path_readlink":           {"fd"},
	"path_remove_directory":   {"fd"},
	"path_rename":             {"fd", "new_fd"},
	"path_symlink":            {"fd"},
	"path_unlink_file":        {"fd"},
	"fd_filestat_set_times":   {"fd"},
}

// newAnchoring is anchoring of fn, the function name, with params.
func newAnchoring(name string, fn api.GoModuleFunction, fds *descriptors, params []string) (anchoring, error) {
	a := anchoring{fn: fn, fds: fds}
	for _, p := range anchorParams[name] {
		at := slices.Index(params, p)
		if at < 0 {
			return anchoring{}, fmt.Errorf("wazero's %s has no parameter %s", name, p)
		}
		a.at = append(a.at, at)
	}
	if name == "path_symlink" {
		// Its first path is the link's text, relative to nothing.
		a.at = append([]int{-1}, a.at...)
	}
	return a, nil
}

// Call implements api.GoModuleFunction.
func (a anchoring) Call(ctx context.Context, mod api.Module, stack []uint64) {
	dirs := guestfs.DirsOf(ctx)
	if dirs == nil {
		a.fn.Call(ctx, mod, stack)
		return
	}
	var args [2]*guestfs.Anchor
	for i, at := range a.at {
		if at >= 0 {
			rec, _ := a.fds.lookup(mod, uint32(stack[at]))
			args[i] = rec.dir
		}
	}
	dirs.Using(args[:]...)
	defer dirs.Using()
	a.fn.Call(ctx, mod, stack)
}
