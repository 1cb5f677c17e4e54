//go:build unix

package host

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// BenchmarkIdleFollowers is 50 followers of an agent that a process holds
// but that writes nothing (a web view left open on a run waiting for its
// model): the CPU they cost the process each second, reading the history
// again and asking whether the run still holds the agent.
//
//	go test ./host -run '^$' -bench IdleFollowers -benchtime 3x
func BenchmarkIdleFollowers(b *testing.B) {
	eng, store := fileEngine(b)
	af := agentIn(b, "name: f\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns:\n  - text: done\n")
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "f", Prompt: "go"}); err != nil {
		b.Fatal(err)
	}
	lock, err := store.Lock("f", checkpoint.ThisProcess("bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer lock.Unlock()
	const followers, idle = 50, 3 * time.Second
	var cpuPerSecond time.Duration
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range followers {
			wg.Go(func() { ReadHistory(ctx, store, "f", true, func(Event, []byte) error { return nil }) })
		}
		time.Sleep(time.Second) // past the first polls
		cpu := processCPU()
		time.Sleep(idle)
		cpuPerSecond += (processCPU() - cpu) / time.Duration(idle/time.Second)
		cancel()
		wg.Wait()
	}
	b.ReportMetric(float64(cpuPerSecond.Microseconds())/1000/float64(b.N), fmt.Sprintf("cpu-ms/s-%d-followers", followers))
}
