// Package wasmcode reads and rewrites WebAssembly binaries as bytes,
// without compiling them: it splits a module into its sections and puts
// it back together (Sections, Rebuild), reads their encodings (Reader),
// rewrites a module so that the host can stop it from another goroutine
// (WithStopChecks) and a fast-mode module so that an initialised instance
// can be snapshotted and restored (NewReactor). Its input is untrusted:
// every reader keeps the first error and a malformed module is refused
// with ErrInvalid, never a panic (FuzzStopChecks, FuzzNewReactor).
//
// It is the sandbox's own and no API: only sandbox and its sub-packages
// import it.
package wasmcode

import "errors"

// ErrInvalid is bytes that are not a WebAssembly module this package can
// read. The sandbox reports it as sandbox.ErrInvalidModule, the same
// value.
var ErrInvalid = errors.New("not a valid WebAssembly module")
