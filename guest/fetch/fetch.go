// Package fetch holds the module of cairn's fetch tool (a URL to readable
// text), built from ./cmd/fetch and embedded. It is a module of its own,
// apart from the built-in tools, so that an agent that does not use it
// never compiles it, and so that the HTML a server sends is parsed in the
// sandbox. An agent file names it as `module: fetch` with a net grant.
package fetch

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"sync"
)

// The generator runs from the repository root so its paths are the same
// under go generate and in CI.
//go:generate sh -c "cd ../.. && go run guest/fetch/gen.go"

// compressed is the module, gzip-compressed: a Go module compresses to a
// quarter of its size, and the binary carries it whether or not an agent
// uses it.
//
//go:embed fetch.wasm.gz
var compressed []byte

var (
	once   sync.Once
	module []byte
)

// Module returns the wasm module of the fetch tool, with its manifest,
// decompressed on the first call. The result is shared: do not change it.
// It is nil only if the embedded bytes do not decompress, which a test of
// this package rules out.
func Module() []byte {
	once.Do(func() { module, _ = decompress(compressed) })
	return module
}

func decompress(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}
