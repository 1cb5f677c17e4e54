// Package builtin holds the module of cairn's built-in tools, embedded, so
// the host runs it like any other tool. The module is C (./c), built with
// clang for wasm32-wasi in the fast mode: 109 KB and 141 functions,
// where the same tools in Go made 5.6 MB and some 3,000, which
// every first run compiled and every call instantiated. The Go definitions
// in ./tools remain the reference: the manifest is theirs, and the tests
// hold the C tools to their every output and error, byte for byte.
package builtin

import _ "embed"

// The generator runs from the repository root so its paths are the same
// under go generate and in CI.
//go:generate sh -c "cd ../.. && go run guest/builtin/gen.go"

// Module is the wasm module of the built-in tools, with its manifest.
//
//go:embed builtin.wasm
var Module []byte
