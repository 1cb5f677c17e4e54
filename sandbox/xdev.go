package sandbox

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// crossRenaming is path_rename that answers a rename from one mount to
// another EXDEV, as rename(2) answers one across mount points, so that a
// program copies instead (as mv does). wazero's says ENOSYS, as if the
// host had no path_rename, and says it only then: cairn's filesystems all
// rename.
type crossRenaming struct {
	rename api.GoModuleFunction // wazero's path_rename
}

// errnoXdev is WASI preview 1's errno xdev.
const errnoXdev = 75

// Call implements api.GoModuleFunction.
func (r crossRenaming) Call(ctx context.Context, mod api.Module, stack []uint64) {
	if r.rename.Call(ctx, mod, stack); stack[0] == errnoNosys {
		stack[0] = errnoXdev
	}
}
