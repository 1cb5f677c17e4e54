// Package builtin holds the module of cairn's built-in tools, built from
// ./cmd/builtin and embedded, so the host runs it like any other tool.
package builtin

import _ "embed"

// The generator runs from the repository root so its paths are the same
// under go generate and in CI.
//go:generate sh -c "cd ../.. && go run guest/builtin/gen.go"

// Module is the wasm module of the built-in tools, with its manifest.
//
//go:embed builtin.wasm
var Module []byte
