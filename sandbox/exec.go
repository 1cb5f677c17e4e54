package sandbox

import (
	"context"
	"io"
)

// Exec compiles wasm and runs it once as a WASI command under the policy,
// with stdin, stdout and stderr passed through (capped by the policy). It
// is Compile and Module.Run in one step, for running any WASI program the
// way a tool runs.
//
// # Errors
//
// Those of Compile and of Module.Run. The module's own exit status, zero
// or not, is Exit.Code and not an error.
func (r *Runtime) Exec(ctx context.Context, wasm []byte, p Policy, stdin io.Reader, stdout, stderr io.Writer) (Exit, error) {
	m, err := r.Compile(ctx, wasm)
	if err != nil {
		return Exit{}, err
	}
	return m.Run(ctx, p, stdin, stdout, stderr)
}
