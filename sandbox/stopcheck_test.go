package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/cairnrun/cairn/guest/builtin"
)

// codeSection is a code section of one function without locals.
func codeSection(instrs ...byte) []byte {
	body := append([]byte{0x00}, instrs...)
	sec := []byte{0x01}
	sec = binary.AppendUvarint(sec, uint64(len(body)))
	return append(sec, body...)
}

// The check goes at the entry of every function and the head of every
// loop, and nowhere else; the rest of the code is copied as it was. A
// function that runs straight into a loop is checked at the loop only.
func TestCheckCodePlacesChecks(t *testing.T) {
	check := checkSequence(2)
	loop := []byte{
		0x03, 0x40, // loop
		0x41, 0x80, 0x01, // i32.const 128
		0x0d, 0x01, // br_if 1
		0x0c, 0x00, // br 0
		0x0b} // end
	for _, c := range []struct {
		name   string
		before []byte // instructions before the loop
		entry  bool   // whether the entry is checked
	}{
		{"block then loop", []byte{0x02, 0x40}, false},
		{"constants then loop", []byte{0x02, 0x40, 0x41, 0x01, 0x1a}, false},
		{"call before loop", []byte{0x02, 0x40, 0x10, 0x00}, true},
		{"branch before loop", []byte{0x02, 0x40, 0x41, 0x00, 0x0d, 0x00}, true},
		{"if before loop", []byte{0x41, 0x00, 0x04, 0x40, 0x0b, 0x02, 0x40}, true},
	} {
		code := append(append(append([]byte(nil), c.before...), loop...), 0x0b, 0x0b) // end (block) end (function)
		got, err := checkCode(codeSection(code...), 2)
		must(t, err)
		body := []byte{0x00}
		if c.entry {
			body = append(body, check...)
		}
		body = append(body, c.before...)
		body = append(body, 0x03, 0x40)
		body = append(body, check...)
		body = append(body, loop[2:]...)
		body = append(body, 0x0b, 0x0b)
		want := binary.AppendUvarint([]byte{0x01}, uint64(len(body)))
		want = append(want, body...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\ngot  % x\nwant % x", c.name, got, want)
		}
	}
	// A function without a loop is checked at its entry.
	got, err := checkCode(codeSection(0x41, 0x01, 0x1a, 0x0b), 2)
	must(t, err)
	body := append(append([]byte{0x00}, check...), 0x41, 0x01, 0x1a, 0x0b)
	if want := append(binary.AppendUvarint([]byte{0x01}, uint64(len(body))), body...); !bytes.Equal(got, want) {
		t.Errorf("no loop:\ngot  % x\nwant % x", got, want)
	}
}

// The fuel constants are signed LEB128, as i32.const reads them, and the
// sign bit of 8192's second byte makes that differ from unsigned LEB128.
func TestAppendSLEB(t *testing.T) {
	for _, v := range []int64{0, 1, 63, 64, -1, -64, -65, 8192, 1 << 20, -1 << 31} {
		r := &reader{p: appendSLEB(nil, v)}
		if got := r.sleb(); got != v || len(r.p) != 0 || r.err != nil {
			t.Errorf("%d: read back %d (%d bytes left, %v)", v, got, len(r.p), r.err)
		}
	}
}

// Code that names the stop global, or any global past the module's own,
// is refused: a guest must not be able to clear its own stop.
func TestCheckCodeRefusesForeignGlobals(t *testing.T) {
	for name, code := range map[string][]byte{
		"global.set": codeSection(0x41, 0x00, 0x24, 0x02, 0x0b),
		"global.get": codeSection(0x23, 0x07, 0x1a, 0x0b),
	} {
		if _, err := checkCode(code, 2); err == nil {
			t.Errorf("%s of a global past the module's own: no error", name)
		}
	}
	for _, g := range []byte{0x02, 0x03} {
		if _, err := checkCode(codeSection(0x41, 0x00, 0x24, g, 0x0b), 2); err == nil {
			t.Errorf("global.set %d, the stop or the fuel global: no error", g)
		}
	}
	if _, err := checkCode(codeSection(0x41, 0x00, 0x24, 0x01, 0x0b), 2); err != nil {
		t.Errorf("global.set of the module's own global: %v", err)
	}
}

// Instructions of proposals the runtimes do not enable (here a tail call
// and an atomic) are not guessed at: the module keeps wazero's stop.
func TestCheckCodeRefusesUnknownInstructions(t *testing.T) {
	for name, code := range map[string][]byte{
		"return_call":      codeSection(0x12, 0x00, 0x0b),
		"atomic":           codeSection(0x41, 0x00, 0xfe, 0x10, 0x02, 0x00, 0x1a, 0x0b),
		"truncated":        codeSection(0x41),
		"multi-memory arg": codeSection(0x41, 0x00, 0x28, 0x42, 0x01, 0x00, 0x1a, 0x0b),
	} {
		if _, err := checkCode(code, 0); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Every committed module, the Go guests among them, takes the rewrite,
// and the result still compiles; a start function becomes an export.
func TestStopChecksRewriteCompiles(t *testing.T) {
	for name, wasm := range watBytes {
		sc, err := withStopChecks(wasm)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if sc.start != (name == "start") {
			t.Errorf("%s: start %v", name, sc.start)
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

// FuzzStopChecks feeds the rewrite arbitrary modules: it must never panic,
// and what it returns must be a module whose sections read back.
func FuzzStopChecks(f *testing.F) {
	for _, wasm := range watBytes {
		f.Add(wasm)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		sc, err := withStopChecks(wasm)
		if err != nil {
			return
		}
		secs, err := sections(sc.code)
		if err != nil {
			t.Fatalf("rewritten module does not read back: %v", err)
		}
		if exports, err := exportNames(secs[secExport]); err != nil || !exports[stopExport] {
			t.Fatalf("rewritten module lacks %s: %v", stopExport, err)
		}
	})
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

// BenchmarkStopChecksRewrite is the rewrite of the built-in module, which
// every process start pays once per module.
//
//	go test ./sandbox -run '^$' -bench StopChecksRewrite
func BenchmarkStopChecksRewrite(b *testing.B) {
	b.SetBytes(int64(len(builtin.Module)))
	for i := 0; i < b.N; i++ {
		if _, err := withStopChecks(builtin.Module); err != nil {
			b.Fatal(err)
		}
	}
}
