package fetch

import (
	"bytes"
	"testing"

	"github.com/cairnrun/cairn/abi"
)

// The embedded module decompresses to a wasm module that carries the fetch
// tool's manifest, and every call gives the same bytes.
func TestModuleDecompresses(t *testing.T) {
	m := Module()
	if !bytes.HasPrefix(m, []byte("\x00asm")) {
		t.Fatalf("the fetch module is %d bytes, not wasm", len(m))
	}
	man, err := abi.ReadManifest(m)
	if err != nil || len(man.Tools) != 1 || man.Tools[0].Name != "fetch" {
		t.Fatalf("manifest %+v, %v", man, err)
	}
	if &Module()[0] != &m[0] {
		t.Fatal("a second call decompressed again")
	}
}
