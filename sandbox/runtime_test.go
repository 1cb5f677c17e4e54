package sandbox

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Load compiles in the background: Wait gives the module Compile would,
// or its error; a Wait whose context ends returns at once; after Close,
// Load fails instead of starting work nobody would wait for.
func TestLoad(t *testing.T) {
	ctx := context.Background()
	r, err := NewRuntime(ctx, Config{})
	must(t, err)
	good := r.Load(ctx, watBytes["loop"])
	bad := r.Load(ctx, []byte("\x00asm\x01\x00\x00\x00\x01\x03\x01\x42\x00"))
	m, err := good.Wait(ctx)
	if err != nil || m == nil || !good.Done() {
		t.Fatalf("good module: %v, %v", m, err)
	}
	if _, err := bad.Wait(ctx); !errors.Is(err, errInvalidModule) {
		t.Fatalf("bad module: got %v, want errInvalidModule", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	compiling := &Loading{done: make(chan struct{})} // one that never ends
	if _, err := compiling.Wait(canceled); !errors.Is(err, context.Canceled) || compiling.Done() {
		t.Fatalf("Wait with an ended context: %v", err)
	}
	must(t, r.Close(ctx))
	if _, err := r.Load(ctx, watBytes["loop"]).Wait(ctx); err == nil {
		t.Fatal("Load after Close: no error")
	}
}

// An instance not granted real randomness reads wazero's deterministic
// source, the same bytes in every instance; one granted it reads its own.
func TestDeterministicRandomness(t *testing.T) {
	ctx := context.Background()
	m, err := testRT.Compile(ctx, watBytes["random"])
	must(t, err)
	read := func(p Policy) string {
		var out bytes.Buffer
		ex, err := m.Run(ctx, p, nil, &out, io.Discard)
		if err != nil || ex.Code != 0 || out.Len() != 32 {
			t.Fatalf("run: %v, exit %d, %d bytes", err, ex.Code, out.Len())
		}
		return out.String()
	}

	// What the module reads under wazero's defaults.
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	var want bytes.Buffer
	_, err = rt.InstantiateWithConfig(ctx, watBytes["random"], wazero.NewModuleConfig().WithStdout(&want))
	must(t, err)

	if a, b := read(Policy{}), read(Policy{}); a != want.String() || b != a {
		t.Errorf("deterministic randomness: %x and %x, want wazero's %x in both", a, b, want.String())
	}
	if a, b := read(Policy{RealRandom: true}), read(Policy{RealRandom: true}); a == b || a == want.String() {
		t.Errorf("real randomness: %x and %x", a, b)
	}
}

// Loading a module of megabytes from the compile cache returns the heap's
// free pages to the system before wazero loads it and again after, so
// that the garbage of rewriting and decoding it is not resident beside
// its machine code; compiling it into the cache, and a small module's
// loading, do not collect at all.
func TestCompilingABigModuleFreesTheHeap(t *testing.T) {
	ctx := context.Background()
	big, err := os.ReadFile("../examples/tools/textstats/textstats.wasm")
	must(t, err)
	cache := t.TempDir()
	for i, want := range []int{0, 2} {
		r, err := NewRuntime(ctx, Config{CacheDir: cache})
		must(t, err)
		freed := 0
		r.freeHeap = func() { freed++ }
		_, err = r.Compile(ctx, watBytes["loop"])
		must(t, err)
		if freed != 0 {
			t.Fatalf("compiling a small module freed the heap %d times", freed)
		}
		_, err = r.Compile(ctx, big)
		must(t, err)
		r.Close(ctx)
		if freed != want {
			t.Fatalf("readying a module of %d bytes, the cache warm: %t, freed the heap %d times, want %d", len(big), i == 1, freed, want)
		}
	}
}
