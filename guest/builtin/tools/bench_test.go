package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
)

// BenchmarkServeReadFile is the built-in read_file served natively, from
// request bytes to response bytes, on the 2.7 KB file of the sandbox's
// BenchmarkReadFile: what the same Go code costs outside wasm.
//
//	go test ./guest/builtin/tools -run '^$' -bench ServeReadFile
func BenchmarkServeReadFile(b *testing.B) {
	ws := b.TempDir()
	content := bytes.Repeat([]byte("a line of text in the file\n"), 100)
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	req, err := abi.Marshal(abi.Request{ABI: abi.Version, Tool: "read_file", Input: `{"path":"f.txt"}`, Workspace: ws})
	if err != nil {
		b.Fatal(err)
	}
	tools := All()
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if code := guest.Serve(bytes.NewReader(req), &out, tools...); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	if r, err := abi.DecodeResponse(out.Bytes()); err != nil || r.Error != "" {
		b.Fatal(err, r.Error)
	}
}
