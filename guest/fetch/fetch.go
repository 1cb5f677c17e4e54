// Package fetch holds the module of cairn's fetch tool (a URL to readable
// text), built from ./cmd/fetch and embedded. It is a module of its own,
// apart from the built-in tools, so that an agent that does not use it
// never compiles it, and so that the HTML a server sends is parsed in the
// sandbox. An agent file names it as `module: fetch` with a net grant.
package fetch

import _ "embed"

// The generator runs from the repository root so its paths are the same
// under go generate and in CI.
//go:generate sh -c "cd ../.. && go run guest/fetch/gen.go"

// Module is the wasm module of the fetch tool, with its manifest.
//
//go:embed fetch.wasm
var Module []byte
