package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var baselineCairn = flag.String("baseline-cairn", "", "another cairn binary for BenchmarkStartToFirstModelRequest to measure beside this one")

// BenchmarkStartToFirstModelRequest is the time from starting `cairn run`
// to its first request reaching the model server (an OpenAI-compatible
// one on loopback), with the example's tools (the built-in module and
// textstats), with an empty compile cache and with a warm one, each on a
// new store (the first agent of a store, which keeps the modules it runs
// with), and with a warm cache on a store that already has them (as a
// user's store does after the first run), in the same run; and the same
// for another build of cairn when -baseline-cairn names one. p50-ms is the
// median of b.N starts.
//
//	go test ./cmd/cairn -run '^$' -bench StartToFirstModelRequest -benchtime 10x [-baseline-cairn /path/to/cairn]
func BenchmarkStartToFirstModelRequest(b *testing.B) {
	bins := map[string]string{"this": cairnBinary(b)}
	if *baselineCairn != "" {
		bins["baseline"] = *baselineCairn
	}
	arrived := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case arrived <- time.Now():
		default:
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	dir := b.TempDir()
	stats, err := os.ReadFile(filepath.Join("..", "..", "examples", "tools", "textstats", "textstats.wasm"))
	must(b, err)
	must(b, os.WriteFile(filepath.Join(dir, "textstats.wasm"), stats, 0o644))
	must(b, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	agent := filepath.Join(dir, "agent.yaml")
	must(b, os.WriteFile(agent, []byte(fmt.Sprintf(`
name: start
model: {provider: openai, name: m, base_url: %s/v1}
prompt: Say done.
workspace: workspace
tools:
  - module: builtin
  - module: textstats.wasm
    grant: {workspace: ro}
`, srv.URL)), 0o644))

	for _, build := range []string{"baseline", "this"} {
		bin, ok := bins[build]
		if !ok {
			continue
		}
		for _, cache := range []string{"cold", "warm", "warm-store"} {
			b.Run(build+"/"+cache, func(b *testing.B) {
				cacheDir := filepath.Join(b.TempDir(), "cache")
				store := ""
				if cache == "warm-store" {
					store = b.TempDir()
				}
				if cache != "cold" {
					start(b, bin, agent, cacheDir, store, arrived)
				}
				d := make([]time.Duration, b.N)
				for i := range d {
					if cache == "cold" {
						must(b, os.RemoveAll(cacheDir))
					}
					d[i] = start(b, bin, agent, cacheDir, store, arrived)
				}
				slices.Sort(d)
				b.ReportMetric(float64(d[len(d)/2].Microseconds())/1e3, "p50-ms")
			})
		}
	}
}

// start runs the agent once, on store or on a new one when store is "",
// and returns how long its first model request took to arrive.
func start(b *testing.B, bin, agent, cache, store string, arrived chan time.Time) time.Duration {
	b.Helper()
	if store == "" {
		store = b.TempDir()
	}
	cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "-f", agent)
	began := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("run: %v\n%s", err, out)
	}
	select {
	case at := <-arrived:
		return at.Sub(began)
	default:
		b.Fatal("the run ended without asking the model")
		return 0
	}
}

// BenchmarkFirstToolCall is how long the first tool call of a run takes
// (the tool_end event's duration) when the model takes 300 ms to ask for
// it, as a hosted model does at least: the built-in list_dir, compile
// cache warm, for this build and, with -baseline-cairn, another, in the
// same run. p50-ms is the median of b.N runs.
//
//	go test ./cmd/cairn -run '^$' -bench FirstToolCall -benchtime 5x [-baseline-cairn /path/to/cairn]
func BenchmarkFirstToolCall(b *testing.B) {
	bins := map[string]string{"this": cairnBinary(b)}
	if *baselineCairn != "" {
		bins["baseline"] = *baselineCairn
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := `{"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`
		if !strings.Contains(string(body), `"tool_call_id"`) {
			time.Sleep(300 * time.Millisecond)
			chunk = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"list_dir","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
		}
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", chunk)
	}))
	defer srv.Close()
	dir := b.TempDir()
	must(b, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	agent := filepath.Join(dir, "agent.yaml")
	must(b, os.WriteFile(agent, []byte(fmt.Sprintf(`
name: first
model: {provider: openai, name: m, base_url: %s/v1}
prompt: List the workspace.
workspace: workspace
tools: [{module: builtin}]
`, srv.URL)), 0o644))
	for _, build := range []string{"baseline", "this"} {
		bin, ok := bins[build]
		if !ok {
			continue
		}
		b.Run(build, func(b *testing.B) {
			cache := filepath.Join(b.TempDir(), "cache")
			run := func() float64 {
				out, err := exec.Command(bin, "run", "--json", "--store", b.TempDir(), "--cache", cache, "-f", agent).Output()
				if err != nil {
					b.Fatalf("run: %v\n%s", err, out)
				}
				for _, e := range events(out) {
					if e.Type == "tool_end" && e.Call != nil {
						return e.Call.DurationMS
					}
				}
				b.Fatalf("no tool_end in\n%s", out)
				return 0
			}
			run() // fills the compile cache
			d := make([]float64, b.N)
			for i := range d {
				d[i] = run()
			}
			slices.Sort(d)
			b.ReportMetric(d[len(d)/2], "p50-ms")
		})
	}
}
