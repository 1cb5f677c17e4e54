package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

// benchScript asks for approval in its first round, so that the followers
// connect while the run holds the agent, then runs twenty rounds.
var benchScript = "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: x}}]\n" +
	strings.Repeat("  - tool_calls: [{name: list_dir, input: {}}]\n", 20) + "  - text: done\n"

// BenchmarkFollowers times event delivery: from the moment an event is
// made (its time field) to its arrival at each of N clients following the
// agent over SSE, while a run of twenty rounds goes on. It reports the
// median and the worst delivery of the events after the followers joined.
func BenchmarkFollowers(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("followers=%d", n), func(b *testing.B) {
			var all []time.Duration
			for i := 0; i < b.N; i++ {
				all = append(all, followRun(b, n)...)
			}
			slices.Sort(all)
			b.ReportMetric(float64(all[len(all)/2].Microseconds())/1e3, "ms-p50")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1e3, "ms-p99")
			b.ReportMetric(float64(all[len(all)-1].Microseconds())/1e3, "ms-max")
		})
	}
}

// followRun runs the bench agent with n followers and returns each
// follower's delivery time of each event after they joined.
func followRun(b *testing.B, n int) []time.Duration {
	f := newFixture(b, Config{Loopback: true})
	decide, ended := awaitingBench(b, f)
	var mu sync.Mutex
	var delays []time.Duration
	var joined, done sync.WaitGroup
	joined.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			d := follow(f.http.URL+"/api/agents/bench/events?follow=1", &joined)
			mu.Lock()
			delays = append(delays, d...)
			mu.Unlock()
		}()
	}
	joined.Wait()
	close(decide)
	<-ended
	done.Wait()
	return delays
}

// awaitingBench runs the bench agent on f's engine and returns once its
// run waits for approval: closing decide approves the call, and ended
// closes when the run is over.
func awaitingBench(b *testing.B, f *fixture) (decide, ended chan struct{}) {
	dir := filepath.Join(f.agents, "bench")
	os.MkdirAll(filepath.Join(dir, "workspace"), 0o755)
	os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(benchScript), 0o644)
	af, err := host.ParseAgentFile([]byte(approvalAgent), dir)
	if err != nil {
		b.Fatal(err)
	}
	asked := make(chan struct{})
	decide, ended = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		f.eng.Run(context.Background(), host.RunOptions{Agent: af, ID: "bench", Prompt: "go",
			Approver: func(context.Context, host.ApprovalRequest) (host.Decision, error) {
				close(asked)
				<-decide
				return host.Decision{Approved: true}, nil
			}})
	}()
	<-asked
	return decide, ended
}

// follow reads an SSE stream to its end; once it has read the approval
// request it counts itself joined and times every later event.
func follow(url string, joined *sync.WaitGroup) []time.Duration {
	resp, err := http.Get(url)
	if err != nil {
		joined.Done()
		return nil
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	in := false
	var out []time.Duration
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			if !in {
				joined.Done()
			}
			return out
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok || len(data) < 2 {
			continue
		}
		if in {
			var e struct{ Time time.Time }
			if json.Unmarshal(data, &e) == nil {
				out = append(out, time.Since(e.Time))
			}
		} else if bytes.Contains(data, []byte(`"approval_required"`)) {
			in = true
			joined.Done()
		}
	}
}

// BenchmarkAPIUnderFollowers times a GET of an agent, and of the agent
// list, while 0 or 50 clients follow the agent's events and its run waits.
func BenchmarkAPIUnderFollowers(b *testing.B) {
	for _, n := range []int{0, 50} {
		b.Run(fmt.Sprintf("followers=%d", n), func(b *testing.B) { apiUnder(b, n) })
	}
}

func apiUnder(b *testing.B, n int) {
	f := newFixture(b, Config{Loopback: true})
	decide, ended := awaitingBench(b, f)
	var joined, done sync.WaitGroup
	joined.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			follow(f.http.URL+"/api/agents/bench/events?follow=1", &joined)
		}()
	}
	joined.Wait()
	for _, path := range []string{"/api/agents/bench", "/api/agents"} {
		b.Run(strings.TrimPrefix(path, "/api/"), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				resp, err := http.Get(f.http.URL + path)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatal(err, resp.Status)
				}
				resp.Body.Close()
			}
		})
	}
	close(decide)
	<-ended
	done.Wait()
}
