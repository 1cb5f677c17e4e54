package sandbox

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// errnoBadf is WASI preview 1's errno badf.
const errnoBadf = 8

// instantiateWASI adds WASI preview 1 to a runtime: wazero's functions,
// but fd_renumber, which is renumbering's.
func instantiateWASI(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	rn, err := newRenumbering(ctx, b)
	if err != nil {
		return fmt.Errorf("instantiate WASI: %w", err)
	}
	i32 := api.ValueTypeI32
	_, err = b.NewFunctionBuilder().
		WithGoModuleFunction(rn, []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("fd", "to").WithResultNames("errno").
		Export("fd_renumber").Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("instantiate WASI: %w", err)
	}
	return nil
}

// renumbering is fd_renumber(fd, to) as wasmtime has it and the WASI
// spec means it: fd's file replaces the one open at to, and a to where
// no file is open is EBADF. wazero's own puts fd's file at index to of
// the instance's descriptor table whether or not a file is open there,
// growing the table to that index: 8 bytes of host memory for every
// number up to it, outside the guest's memory limit (16 GiB for
// 0x7fffffff), and a descriptor past any the call's budget of open
// files allows. With to open, every descriptor stays below the number
// of files open at once, since wazero gives a new file the lowest free
// number. fd_renumber(fd, fd) of an open fd changes nothing (wazero's
// would close the file and keep it at fd).
type renumbering struct {
	renumber, advise api.GoModuleFunction // wazero's fd_renumber and fd_advise
}

// newRenumbering takes wazero's fd_renumber and fd_advise from b, which
// holds wazero's WASI functions.
func newRenumbering(ctx context.Context, b wazero.HostModuleBuilder) (renumbering, error) {
	cm, err := b.Compile(ctx)
	if err != nil {
		return renumbering{}, err
	}
	defer cm.Close(ctx)
	defs := cm.ExportedFunctions()
	rn, ok1 := defs["fd_renumber"].GoFunction().(api.GoModuleFunction)
	advise, ok2 := defs["fd_advise"].GoFunction().(api.GoModuleFunction)
	if !ok1 || !ok2 {
		return renumbering{}, fmt.Errorf("wazero's fd_renumber or fd_advise is not a Go function")
	}
	return renumbering{renumber: rn, advise: advise}, nil
}

// Call implements api.GoModuleFunction.
func (r renumbering) Call(ctx context.Context, mod api.Module, stack []uint64) {
	fd, to := uint32(stack[0]), uint32(stack[1])
	switch {
	case !r.open(ctx, mod, to):
		stack[0] = errnoBadf
	case fd == to:
		stack[0] = 0
	default:
		r.renumber.Call(ctx, mod, stack)
	}
}

// open reports whether fd is an open descriptor of mod. wazero's
// fd_advise advises nothing: it looks fd up, EBADF if none is open
// there, and checks the advice.
func (r renumbering) open(ctx context.Context, mod api.Module, fd uint32) bool {
	stack := []uint64{uint64(fd), 0, 0, 0} // offset 0, length 0, advice normal
	r.advise.Call(ctx, mod, stack)
	return stack[0] == 0
}
