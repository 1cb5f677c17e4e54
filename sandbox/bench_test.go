package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

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

// BenchmarkMemoryBombRSS is the host's peak resident memory while a guest
// at a 64 MiB limit grows its memory until it can't (grow: a page at a
// time; go: the Go runtime's allocator; recurse: deep recursion, whose
// stack is not guest memory), with wazero's own allocator and with the
// sandbox's reserving one, in the same run. peak-MiB is the process's
// peak; over-MiB is how far it rose above where it started.
//
//	go test ./sandbox -run '^$' -bench MemoryBombRSS -benchtime 3x
func BenchmarkMemoryBombRSS(b *testing.B) {
	ctx := context.Background()
	guests := []struct {
		name string
		wasm []byte
		args []string
	}{{"grow", watBytes["grow"], nil}, {"go", guestBytes["misbehave"], []string{"membomb"}}, {"recurse", watBytes["recurse"], nil}}
	for _, alloc := range []string{"wazero-default", "mmap-reserve"} {
		for _, g := range guests {
			b.Run(alloc+"/"+g.name, func(b *testing.B) {
				rt, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
				if err != nil {
					b.Fatal(err)
				}
				defer rt.Close(ctx)
				if alloc == "wazero-default" {
					rt.alloc = nil
				}
				m, err := rt.Compile(ctx, g.wasm)
				if err != nil {
					b.Fatal(err)
				}
				p := Policy{Args: g.args, MemoryLimit: 64 << 20}
				var peak, over int64
				for i := 0; i < b.N; i++ {
					base, err := resetPeakRSS()
					if err != nil {
						b.Skip(err)
					}
					m.Run(ctx, p, nil, io.Discard, io.Discard)
					hwm, _ := peakRSS()
					peak, over = max(peak, hwm), max(over, hwm-base)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				b.ReportMetric(float64(over)/(1<<20), "over-MiB")
			})
		}
	}
}

// BenchmarkCloseOnContextDone is a loop-heavy guest function (sum of 10
// million numbers, no calls) with and without wazero's
// WithCloseOnContextDone, which the sandbox needs for its deadline, in the
// same run.
//
//	go test ./sandbox -run '^$' -bench CloseOnContextDone -benchtime 20x
func BenchmarkCloseOnContextDone(b *testing.B) {
	for _, closeOnDone := range []bool{false, true} {
		b.Run(fmt.Sprintf("close-on-done=%v", closeOnDone), func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(closeOnDone))
			defer rt.Close(ctx)
			mod, err := rt.Instantiate(ctx, watBytes["loop"])
			if err != nil {
				b.Fatal(err)
			}
			sum := mod.ExportedFunction("sum")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := sum.Call(ctx, 10_000_000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDeadline is how late an infinite loop returns after its
// deadline (late-µs), beside the whole of a call that returns at once
// (empty), in the same run.
//
//	go test ./sandbox -run '^$' -bench Deadline -benchtime 50x
func BenchmarkDeadline(b *testing.B) {
	ctx := context.Background()
	b.Run("empty", func(b *testing.B) {
		m, err := testRT.Compile(ctx, watBytes["loop"])
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if _, err := m.Run(ctx, Policy{}, nil, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("spin-past-deadline", func(b *testing.B) {
		m, err := testRT.Compile(ctx, watBytes["spin"])
		if err != nil {
			b.Fatal(err)
		}
		var late time.Duration
		for i := 0; i < b.N; i++ {
			deadline := time.Now().Add(2 * time.Millisecond)
			dctx, cancel := context.WithDeadline(ctx, deadline)
			_, err := m.Run(dctx, Policy{}, nil, io.Discard, io.Discard)
			late += time.Since(deadline)
			cancel()
			if !errors.Is(err, ErrDeadline) {
				b.Fatalf("got %v, want ErrDeadline", err)
			}
		}
		b.ReportMetric(float64(late.Microseconds())/float64(b.N), "late-µs")
	})
}
