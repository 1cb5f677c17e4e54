//go:build linux

package sandbox

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/rss"
)

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
					base, err := rss.ResetPeak()
					if err != nil {
						b.Skip(err)
					}
					m.Run(ctx, p, nil, io.Discard, io.Discard)
					hwm, _ := rss.Peak()
					peak, over = max(peak, hwm), max(over, hwm-base)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				b.ReportMetric(float64(over)/(1<<20), "over-MiB")
			})
		}
	}
}

// TestOverlayFillRSS: writing 2 GiB through an overlay stops at the
// staging limit, and the host's resident memory does not grow with what
// was staged: staged bytes are in files, not in the host's memory.
func TestOverlayFillRSS(t *testing.T) {
	ov, _ := newOverlay(t, t.TempDir())
	m := compile(t, "ovprog")
	p := Policy{Args: []string{"fill:/work/big.bin:2147483648"}, Mounts: []Mount{{GuestPath: "/work", Overlay: ov}}}
	var out strings.Builder
	m.Run(context.Background(), Policy{Args: []string{"write:/work/warm:x"}, Mounts: p.Mounts}, nil, io.Discard, io.Discard)
	base, err := rss.ResetPeak()
	if err != nil {
		t.Skip(err)
	}
	_, err = m.Run(context.Background(), p, nil, &out, io.Discard)
	hwm, _ := rss.Peak()
	must(t, err)
	t.Logf("%s; peak RSS %d MiB, %d MiB over the %d MiB before", strings.TrimSpace(out.String()), hwm>>20, (hwm-base)>>20, base>>20)
	if !(ov.Exhausted() != nil) {
		t.Fatalf("2 GiB fit under the default staging limit: %s", out.String())
	}
	if hwm-base > defaultStagingLimit/4 {
		t.Fatalf("staging %d MiB raised the peak resident memory by %d MiB", defaultStagingLimit>>20, (hwm-base)>>20)
	}
}

// BenchmarkCompileAtLimits is the time and the host's peak resident memory
// of compiling modules just under the default compile limits — the most
// a module that is not refused can cost — and of refusing the bombs past
// them. over-MiB is how far the peak rose above where it started.
//
//	go test ./sandbox -run '^$' -bench CompileAtLimits -benchtime 1x
func BenchmarkCompileAtLimits(b *testing.B) {
	ctx := context.Background()
	for _, m := range []struct {
		name string
		wasm []byte
	}{
		{"100000-empty-functions", emptyFunctions(DefaultMaxFunctions)},
		{"1MiB-function", hugeFunction(DefaultMaxFunctionSize)},
		{"bomb-1000000-functions", emptyFunctions(1_000_000)},
		{"bomb-9MiB-function", hugeFunction(9 << 20)},
	} {
		b.Run(m.name, func(b *testing.B) {
			var over int64
			for i := 0; i < b.N; i++ {
				rt, err := NewRuntime(ctx, Config{})
				if err != nil {
					b.Fatal(err)
				}
				base, err := rss.ResetPeak()
				if err != nil {
					b.Skip(err)
				}
				_, err = rt.Compile(ctx, m.wasm)
				hwm, _ := rss.Peak()
				over = max(over, hwm-base)
				rt.Close(ctx)
				if strings.HasPrefix(m.name, "bomb") != errors.Is(err, ErrCompileLimit) {
					b.Fatalf("compile: %v", err)
				}
			}
			b.ReportMetric(float64(over)/(1<<20), "over-MiB")
		})
	}
}
