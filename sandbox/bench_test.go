package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"cairn/abi"
	"cairn/guest/builtin"
)

// BenchmarkReadFile is one call of the built-in read_file: in a fresh
// wazero instance of the embedded module (compile cache warm), and, as the
// baseline, fork/exec of the same tools built as a native binary.
//
//	go test ./sandbox -run '^$' -bench ReadFile -benchtime 200x
func BenchmarkReadFile(b *testing.B) {
	ws := b.TempDir()
	content := bytes.Repeat([]byte("a line of text in the file\n"), 100)
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	b.Run("wasm-fresh-instance", func(b *testing.B) {
		m, err := testRT.Compile(ctx, builtin.Module)
		if err != nil {
			b.Fatal(err)
		}
		p := Policy{Mounts: []Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: true}}}
		req := abi.Request{ABI: abi.Version, Tool: "read_file", Input: `{"path":"f.txt"}`, Workspace: abi.WorkspaceDir}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r, err := m.Call(ctx, p, req)
			if err != nil || r.Response.Error != "" {
				b.Fatal(err, r.Response.Error)
			}
		}
	})

	b.Run("native-fork-exec", func(b *testing.B) {
		bin := filepath.Join(b.TempDir(), "builtin")
		build := exec.Command("go", "build", "-o", bin, "cairn/guest/builtin/cmd/builtin")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		req, _ := abi.Marshal(abi.Request{ABI: abi.Version, Tool: "read_file", Input: `{"path":"f.txt"}`, Workspace: ws})
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			cmd := exec.Command(bin)
			cmd.Stdin = bytes.NewReader(req)
			out, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			if r, err := abi.DecodeResponse(out); err != nil || r.Error != "" {
				b.Fatal(err, r.Error)
			}
		}
	})
}
