package sandbox

import (
	"context"
	"errors"
	"testing"
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
	if _, err := bad.Wait(ctx); !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("bad module: got %v, want ErrInvalidModule", err)
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
