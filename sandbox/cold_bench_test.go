package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/guest/builtin"
)

// BenchmarkColdCall is one read_file call of the built-in module right
// after the last call's background work is done ("warm", as the other call
// benchmarks time it), against the same call after unrelated work ("cold"),
// alternately in the same run. The unrelated work, as a model's response
// is read and decoded and other agents run between two rounds, is one of:
//
//   - idle: 2 ms idle;
//   - touch: 32 MiB the process holds written on the call's goroutine,
//     then 2 ms idle;
//   - other-cores: 16 MiB it holds written by each of two goroutines (on
//     both cores), then 2 ms idle;
//   - fresh: 16 MiB newly allocated and written by each of two goroutines,
//     then 2 ms idle;
//   - idle-20ms: 20 ms idle, nothing else. On a virtual machine a call
//     after this long idle is as slow as one after fresh: what makes a call
//     cold there is how long its core was away from the call's memory (or
//     busy in the kernel faulting pages in), more than the garbage
//     collector; BENCHMARKS.md;
//   - model-request: a model's turn as a run takes it: a request to an
//     OpenAI-compatible server on loopback, its streamed answer of 40
//     chunks read and each decoded, then 2 ms idle;
//   - other-process: another process that writes 32 MiB of its own and
//     exits, then 2 ms idle.
//
// Reported: each one's median and 90th percentile, and cold over warm.
//
//	go test ./sandbox -run '^$' -bench ColdCall -benchtime 300x
func BenchmarkColdCall(b *testing.B) {
	ctx := context.Background()
	_, p, req := readFileCall(b)
	held := make([]byte, 32<<20)
	work := map[string]func(){
		"idle":          func() {},
		"touch":         func() { touch(held) },
		"other-cores":   func() { onTwo(func(i int) { touch(held[i<<24 : (i+1)<<24]) }) },
		"fresh":         func() { onTwo(func(int) { touch(make([]byte, 16<<20)) }) },
		"idle-20ms":     func() { time.Sleep(18 * time.Millisecond) },
		"model-request": modelTurn(b),
		"other-process": func() {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), touchEnv+"=1")
			must(b, cmd.Run())
		},
	}
	for _, kind := range []string{"idle", "touch", "other-cores", "fresh", "idle-20ms", "model-request", "other-process"} {
		b.Run(kind, func(b *testing.B) {
			r, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
			must(b, err)
			defer r.Close(ctx)
			m, err := r.Compile(ctx, builtin.Module)
			must(b, err)
			call := func() time.Duration {
				start := time.Now()
				if res, err := m.Call(ctx, p, req); err != nil || res.Response.Error != "" {
					b.Fatal(err, res.Response.Error)
				}
				return time.Since(start)
			}
			call()
			var warm, cold []time.Duration
			b.ResetTimer()
			for range b.N {
				r.bg.Wait()
				warm = append(warm, call())
				r.bg.Wait()
				work[kind]()
				time.Sleep(2 * time.Millisecond)
				cold = append(cold, call())
			}
			b.StopTimer()
			w, c := percentiles(b, "warm", warm), percentiles(b, "cold", cold)
			b.ReportMetric(c/w, "cold/warm")
		})
	}
}

// touchEnv set in a test binary's environment makes it a process that
// writes 32 MiB and exits (see TestMain): the other process of ColdCall.
const touchEnv = "CAIRN_BENCH_TOUCH"

// modelTurn returns a model's turn as the openai provider takes it: a
// request to a server on loopback, whose answer streams in 40 chunks, each
// decoded.
func modelTurn(b *testing.B) func() {
	chunk := `data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("word ", 10) + `"},"finish_reason":null}]}` + "\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 40 {
			io.WriteString(w, chunk)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	b.Cleanup(srv.Close)
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("say more ", 200) + `"}]}`
	return func() {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		must(b, err)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var v struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
			}
			must(b, json.Unmarshal([]byte(data), &v))
		}
		must(b, sc.Err())
	}
}

// touch writes a byte of every cache line of buf.
func touch(buf []byte) {
	for i := 0; i < len(buf); i += 64 {
		buf[i]++
	}
}

// onTwo runs fn(0) and fn(1) on two goroutines and waits for both.
func onTwo(fn func(int)) {
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { fn(i) })
	}
	wg.Wait()
}

// percentiles reports the median and 90th percentile of d as NAME-p50-µs
// and NAME-p90-µs, and returns the median in microseconds.
func percentiles(b *testing.B, name string, d []time.Duration) float64 {
	slices.Sort(d)
	p50 := float64(d[len(d)/2].Nanoseconds()) / 1e3
	b.ReportMetric(p50, name+"-p50-µs")
	b.ReportMetric(float64(d[len(d)*9/10].Nanoseconds())/1e3, name+"-p90-µs")
	return p50
}
