package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cairn/abi"
	"cairn/checkpoint"
	"cairn/sandbox"
)

// BenchmarkToolCall is one call of the built-in read_file as the host
// makes it (the call's overlay, the sandbox call, its reads and effects
// listed), against the sandbox call alone (the baseline), interleaved in
// the same run, each after 2 ms idle. p50-µs is the median of each;
// x-sandbox, the host's call over the sandbox's.
//
//	go test ./host -run '^$' -bench ToolCall -benchtime 1000x
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	content := []byte(strings.Repeat("a line of text in the file\n", 100))
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	af, err := ParseAgentFile([]byte("name: bench\nmodel: {provider: script, script: s.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n"), dir)
	if err != nil {
		b.Fatal(err)
	}
	mods, err := loadModules(af)
	if err != nil {
		b.Fatal(err)
	}
	rt, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: testCache})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	ts, err := newToolset(ctx, rt, af, mods)
	if err != nil {
		b.Fatal(err)
	}
	view := workspaceView{dir: ws, staging: func(call string) string { return filepath.Join(dir, "staging", "round-1", call) }}
	call := checkpoint.ToolCall{ID: "c1", Name: "read_file", Input: `{"path":"f.txt"}`}
	t := ts.tools["read_file"]
	mod, err := t.module.Wait(ctx)
	if err != nil {
		b.Fatal(err)
	}
	req := abi.Request{ABI: abi.Version, Tool: "read_file", Input: call.Input, Workspace: abi.WorkspaceDir}
	kinds := []struct {
		name string
		call func()
	}{
		{"sandbox", func() {
			if r, err := mod.Call(ctx, t.policy(ws), req); err != nil || r.Response.Error != "" {
				b.Fatal(err, r.Response.Error)
			}
		}},
		{"host", func() {
			if res := ts.runCall(ctx, view, call); res.isError {
				b.Fatal(res.output)
			}
		}},
	}
	times := make([][]time.Duration, len(kinds))
	for _, k := range kinds {
		k.call()
	}
	b.ResetTimer()
	for range b.N {
		for i, k := range kinds {
			time.Sleep(2 * time.Millisecond)
			start := time.Now()
			k.call()
			times[i] = append(times[i], time.Since(start))
		}
	}
	b.StopTimer()
	p50 := make([]float64, len(kinds))
	for i, k := range kinds {
		slices.Sort(times[i])
		p50[i] = float64(times[i][len(times[i])/2].Nanoseconds()) / 1e3
		b.ReportMetric(p50[i], k.name+"-p50-µs")
	}
	b.ReportMetric(p50[1]/p50[0], "x-sandbox")
}
