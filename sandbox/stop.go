package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// guarded runs fn, a call into mod, so that the end of ctx stops the
// guest. A module with stop checks (see wasmcode.WithStopChecks) is stopped by
// setting its stop global and running out its fuel when ctx ends; any
// other runs in a runtime that closes it when ctx ends. Either way a
// stopped guest's call fails as wazero reports it: with the exit status of
// a deadline or of a cancellation.
func (m *Module) guarded(ctx context.Context, mod api.Module, fn func() error) error {
	if !m.stops {
		return fn()
	}
	stop, ok1 := mod.ExportedGlobal(wasmcode.StopExport).(api.MutableGlobal)
	fuel, ok2 := mod.ExportedGlobal(wasmcode.FuelExport).(api.MutableGlobal)
	if !ok1 || !ok2 {
		return fmt.Errorf("%w: no stop global", errInvalidModule)
	}
	var (
		mu    sync.Mutex
		armed = true
		why   error
	)
	disarm := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if armed {
			why = ctx.Err()
			stop.Set(1)
			fuel.Set(1) // the next check looks at stop
		}
	})
	err := fn()
	disarm()
	mu.Lock()
	armed = false
	stopped := why
	mu.Unlock()
	if err == nil || stopped == nil {
		return err
	}
	if errors.Is(stopped, context.DeadlineExceeded) {
		return sys.NewExitError(sys.ExitCodeDeadlineExceeded)
	}
	return sys.NewExitError(sys.ExitCodeContextCanceled)
}

// start runs a command module: its start function, if the rewrite made
// it an export, then _start. As at instantiation, an exit with status 0
// is a success and ends it.
func (m *Module) start(ctx context.Context, mod api.Module) error {
	return m.guarded(ctx, mod, func() error {
		for _, name := range []string{wasmcode.StartExport, "_start"} {
			fn := mod.ExportedFunction(name)
			if fn == nil || (name == wasmcode.StartExport && !m.hasStart) {
				continue
			}
			if _, err := fn.Call(ctx); err != nil {
				var exitErr *sys.ExitError
				if errors.As(err, &exitErr) && exitErr.ExitCode() == 0 {
					return nil
				}
				return err
			}
		}
		return nil
	})
}
