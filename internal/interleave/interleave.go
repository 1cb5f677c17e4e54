// Package interleave times several ways of doing one thing against each
// other in one benchmark: each round calls every way once, in turn, so
// that what the machine does meanwhile (other processes, the garbage
// collector, a cooling cache) falls on all of them alike, and each way's
// median is reported. The benchmarks of the sandbox, the host and MCP use
// it to say what each layer adds to a tool call.
package interleave

import (
	"slices"
	"testing"
	"time"
)

// Way is one way of doing the thing a benchmark compares: Call does it
// once, and fails the benchmark if it goes wrong.
type Way struct {
	Name string
	Call func()
}

// Medians calls each way once untimed (a first call may take a snapshot or
// fill a cache), then b.N rounds in which between runs before each way's
// timed call. It reports each way's median as the metric NAME-p50-µs and
// returns the medians in microseconds, in the order of ways.
func Medians(b *testing.B, ways []Way, between func()) []float64 {
	times := make([][]time.Duration, len(ways))
	for _, w := range ways {
		w.Call()
	}
	b.ResetTimer()
	for range b.N {
		for i, w := range ways {
			between()
			start := time.Now()
			w.Call()
			times[i] = append(times[i], time.Since(start))
		}
	}
	b.StopTimer()
	p50 := make([]float64, len(ways))
	for i, w := range ways {
		slices.Sort(times[i])
		p50[i] = float64(times[i][len(times[i])/2].Nanoseconds()) / 1e3
		b.ReportMetric(p50[i], w.Name+"-p50-µs")
	}
	return p50
}
