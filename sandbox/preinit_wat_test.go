package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// reactorWasm assembles a small fast-mode module (what a C or Rust tool
// could be): a mutable global g and 1 page of memory with "hi" at 16.
//
//	_initialize: init, then g = 7 and mem[32] = 5
//	cairn_call:  g += mem[32]; mem[32] += 1; return g
//
// A call restored from the snapshot returns 12, every time: the warm-up
// call (see takeSnapshot) exits with that status too, so it fails, and the
// snapshot is of the initialised instance. With trap, _initialize traps
// instead.
func reactorWasm(trap bool) []byte {
	init := []byte{0x41, 7, 0x24, 0, 0x41, 32, 0x41, 5, 0x36, 2, 0, 0x0b} // g=7; mem[32]=5
	if trap {
		init = []byte{0x00, 0x0b} // unreachable
	}
	call := []byte{
		0x23, 0, 0x41, 32, 0x28, 2, 0, 0x6a, 0x24, 0, // g = g + mem[32]
		0x41, 32, 0x41, 32, 0x28, 2, 0, 0x41, 1, 0x6a, 0x36, 2, 0, // mem[32] += 1
		0x23, 0, 0x0b, // return g
	}
	return reactorWith(init, call)
}

// reactorWith assembles the module of reactorWasm with the given bodies
// of _initialize and cairn_call.
func reactorWith(init, call []byte) []byte {
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, asmSection(1, asmVec([]byte{0x60, 0, 0}, []byte{0x60, 0, 1, 0x7f}))...)
	m = append(m, asmSection(3, asmVec([]byte{0}, []byte{1}))...)
	m = append(m, asmSection(5, asmVec([]byte{0, 1}))...)
	m = append(m, asmSection(6, asmVec([]byte{0x7f, 1, 0x41, 0, 0x0b}))...)
	m = append(m, asmSection(7, asmVec(
		append(asmName(abi.InitExport), 0, 0),
		append(asmName(abi.CallExport), 0, 1),
		append(asmName("memory"), 2, 0)))...)
	m = append(m, asmSection(10, asmVec(asmBody(init...), asmBody(call...)))...)
	m = append(m, asmSection(11, asmVec([]byte{0, 0x41, 16, 0x0b, 2, 'h', 'i'}))...)
	return m
}

// TestPreinitRestoresGlobalsAndMemory: every call of a module restored
// from its snapshot starts with the globals and memory the
// initialisation left, however many calls ran before, concurrently too.
func TestPreinitRestoresGlobalsAndMemory(t *testing.T) {
	m, err := testRT.Compile(context.Background(), reactorWasm(false))
	must(t, err)
	if m.pre == nil {
		t.Fatal("not in the fast mode")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				ex, err := m.Run(context.Background(), Policy{}, nil, io.Discard, io.Discard)
				if err != nil || ex.Code != 12 {
					errs <- fmt.Errorf("exit %d, %v; want 12", ex.Code, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestPreinitSnapshotAfterWarmUp: when the warm-up call succeeds, the
// snapshot is taken after it, and every call starts where it left.
func TestPreinitSnapshotAfterWarmUp(t *testing.T) {
	call := []byte{
		0x23, 0, 0x41, 1, 0x6a, 0x24, 0, // g = g + 1
		0x23, 0, 0x41, 1, 0x6b, 0x0b, // return g - 1
	}
	m, err := testRT.Compile(context.Background(), reactorWith([]byte{0x0b}, call))
	must(t, err)
	// The warm-up returns 0 and leaves g = 1; a call without it would too.
	for range 3 {
		if ex, err := m.Run(context.Background(), Policy{}, nil, io.Discard, io.Discard); err != nil || ex.Code != 1 {
			t.Fatalf("exit %d, %v; want 1, from the snapshot after the warm-up", ex.Code, err)
		}
	}
}

// TestPreinitFailedInitIsNotKept: an initialisation that traps fails the
// call, and is tried again by the next one.
func TestPreinitFailedInitIsNotKept(t *testing.T) {
	m, err := testRT.Compile(context.Background(), reactorWasm(true))
	must(t, err)
	for range 2 {
		if _, err := m.Run(context.Background(), Policy{}, nil, io.Discard, io.Discard); !errors.Is(err, errTrap) {
			t.Fatalf("got %v, want errTrap", err)
		}
	}
	m.pre.mu.Lock()
	defer m.pre.mu.Unlock()
	if len(m.pre.snaps) != 0 {
		t.Errorf("%d snapshots kept of a failed initialisation", len(m.pre.snaps))
	}
}

// FuzzNewReactor: the rewrite of untrusted bytes never panics, and what
// it writes is a module it can read again.
//
//	go test ./sandbox -run '^$' -fuzz FuzzNewReactor -fuzztime 30s
func FuzzNewReactor(f *testing.F) {
	f.Add(reactorWasm(false))
	f.Add(reactorWasm(true))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, wasm []byte) {
		rx, err := wasmcode.NewReactor(wasm)
		if err != nil {
			return
		}
		if _, err := wasmcode.Sections(rx.Code); err != nil {
			t.Fatalf("the rewrite is unreadable: %v", err)
		}
	})
}

// asmVec, asmSection, asmName and asmBody assemble a module by hand: a
// vector of items, a section, a name, a function body with no locals.
func asmVec(items ...[]byte) []byte {
	out := binary.AppendUvarint(nil, uint64(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func asmSection(id byte, body []byte) []byte {
	return append(binary.AppendUvarint([]byte{id}, uint64(len(body))), body...)
}

func asmName(s string) []byte { return append([]byte{byte(len(s))}, s...) }

func asmBody(code ...byte) []byte {
	b := append([]byte{0}, code...) // no locals
	return append(binary.AppendUvarint(nil, uint64(len(b))), b...)
}
