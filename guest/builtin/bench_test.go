package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest/builtin"
	"github.com/cairnrun/cairn/sandbox"
)

// BenchmarkModules sets the embedded module (the tools in C) beside the
// same tools built in Go from ./tools, in one run: module-bytes, the
// module's size; compile, a new runtime with an empty compile cache
// readying the module; first-call, that and one read_file call, which
// takes the module's snapshot; read-file, a read_file call of the 2.7 KB
// file of the sandbox's BenchmarkReadFile once the module is ready, its
// median and 90th percentile (p50-µs, p90-µs). cpu-ms/op is the process's
// CPU time (user and system, all threads), which a loaded machine changes
// less than the time that passes.
//
//	go test ./guest/builtin -run '^$' -bench Modules -benchtime 5x
//	go test ./guest/builtin -run '^$' -bench Modules/read-file -benchtime 2000x
func BenchmarkModules(b *testing.B) {
	ctx := context.Background()
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat("a line of text in the file\n", 100)), 0o644); err != nil {
		b.Fatal(err)
	}
	p := sandbox.Policy{Mounts: []sandbox.Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: true}}}
	req := abi.Request{ABI: abi.Version, Tool: "read_file", Input: `{"path":"f.txt"}`, Workspace: abi.WorkspaceDir}
	goWasm, err := goModule()
	if err != nil {
		b.Fatal(err)
	}
	call := func(b *testing.B, m *sandbox.Module) {
		if res, err := m.Call(ctx, p, req); err != nil || res.Response.Error != "" {
			b.Fatal(err, res.Response.Error)
		}
	}
	for _, mod := range []struct {
		name string
		wasm []byte
	}{{"c", builtin.Module}, {"go", goWasm}} {
		ready := func(b *testing.B, first bool) {
			b.ReportMetric(float64(len(mod.wasm)), "module-bytes")
			before := cpuTime()
			for range b.N {
				r, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				m, err := r.Compile(ctx, mod.wasm)
				if err != nil {
					b.Fatal(err)
				}
				if first {
					call(b, m)
				}
				r.Close(ctx)
			}
			b.ReportMetric(float64((cpuTime()-before).Milliseconds())/float64(b.N), "cpu-ms/op")
		}
		b.Run("compile/"+mod.name, func(b *testing.B) { ready(b, false) })
		b.Run("first-call/"+mod.name, func(b *testing.B) { ready(b, true) })
		b.Run("read-file/"+mod.name, func(b *testing.B) {
			r, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close(ctx)
			m, err := r.Compile(ctx, mod.wasm)
			if err != nil {
				b.Fatal(err)
			}
			call(b, m)
			d := make([]time.Duration, b.N)
			b.ResetTimer()
			for i := range d {
				start := time.Now()
				call(b, m)
				d[i] = time.Since(start)
			}
			b.StopTimer()
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(d[len(d)*9/10].Nanoseconds())/1e3, "p90-µs")
		})
	}
}

// cpuTime is the CPU time this process has used, in user and system mode.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
