//go:build unix

package host

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkResumeHistory is a resume of an agent that already has a
// history of 10, 1,000 or 10,000 messages, and the one round it then
// takes (one read_file call), as an edge device pays after each reboot: a
// run takes the rounds that make the history (untimed) and pauses at its
// max_rounds; each timed resume takes one round more and pauses again.
// cpu-ms/resume is the process's CPU time over the resumes.
//
//	go test ./host -run '^$' -bench ResumeHistory -benchtime 20x
func BenchmarkResumeHistory(b *testing.B) {
	for _, history := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprint(history), func(b *testing.B) {
			eng, warm := pausedWithHistory(b, history, b.N, "")
			ctx := context.Background()
			b.ResetTimer()
			cpu := processCPU()
			for i := range b.N {
				res, err := eng.Resume(ctx, ResumeOptions{ID: "bench", Limits: RunLimits{MaxRounds: warm + i + 1}})
				if err != nil || res.Status != StatusPaused || res.Rounds != warm+i+1 {
					b.Fatalf("resume %d: %+v, %v", i, res, err)
				}
			}
			cpu = processCPU() - cpu
			b.StopTimer()
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/resume")
		})
	}
}
