package sandbox

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// refusesStopChecks are the committed modules made for the rewrite to
// refuse.
var refusesStopChecks = map[string]bool{"nomem": true}

// Every committed module, the Go guests among them, takes the rewrite,
// but those made to be refused, and the result still compiles; a start
// function becomes an export.
func TestStopChecksRewriteCompiles(t *testing.T) {
	for name, wasm := range watBytes {
		sc, err := wasmcode.WithStopChecks(wasm)
		if refusesStopChecks[name] {
			if err == nil {
				t.Errorf("%s: took the rewrite, made to be refused", name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if sc.Start != (name == "start") {
			t.Errorf("%s: start %v", name, sc.Start)
		}
		m, err := testRT.Compile(t.Context(), wasm)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !m.stops {
			t.Errorf("%s: compiled without stop checks", name)
		}
	}
}

// A guest that spins without calling the host still leaves its own code
// often enough for the Go runtime to stop the world: a collection finishes
// while the guest runs (were it held up, so would be every goroutine,
// the one that stops the guest included), and the guest stops when asked.
func TestSpinningGuestYieldsToTheCollector(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		_, err := testRT.Exec(ctx, watBytes["spin"], Policy{Timeout: time.Hour}, nil, io.Discard, io.Discard)
		done <- err
	}()
	<-started
	time.Sleep(50 * time.Millisecond) // into the loop
	runtime.GC()
	select {
	case err := <-done:
		t.Fatalf("the guest ended before it was stopped: %v", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
