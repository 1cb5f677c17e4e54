package sandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"
)

// moduleOf is a module of one type, () -> (), and of the functions whose
// bodies (their locals and code, without the size) are given, the first
// exported as _start.
func moduleOf(bodies ...[]byte) []byte {
	section := func(out []byte, id byte, body []byte) []byte {
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		return append(out, body...)
	}
	out := []byte("\x00asm\x01\x00\x00\x00")
	out = section(out, 1, []byte{1, 0x60, 0, 0})
	funcs := binary.AppendUvarint(nil, uint64(len(bodies)))
	code := binary.AppendUvarint(nil, uint64(len(bodies)))
	for _, b := range bodies {
		funcs = append(funcs, 0)
		code = binary.AppendUvarint(code, uint64(len(b)))
		code = append(code, b...)
	}
	out = section(out, 3, funcs)
	if len(bodies) > 0 {
		out = section(out, 7, []byte{1, 6, '_', 's', 't', 'a', 'r', 't', 0, 0})
	}
	return section(out, 10, code)
}

// emptyFunctions is a module of n functions that do nothing.
func emptyFunctions(n int) []byte {
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = []byte{0, 0x0b} // no locals; end
	}
	return moduleOf(bodies...)
}

// hugeFunction is a module of one function of size bytes: i32.const 1,
// drop, over and over; each makes a value the compiler keeps track of.
func hugeFunction(size int) []byte {
	body := make([]byte, size)
	body[0] = 0 // no locals
	i := 1
	for ; i+3 < size; i += 3 {
		copy(body[i:], []byte{0x41, 0x01, 0x1a})
	}
	for ; i < size-1; i++ {
		body[i] = 0x01 // nop
	}
	body[size-1] = 0x0b
	return moduleOf(body)
}

// Compile bombs are refused before they are decoded, each with the limit
// it passed: a module of a million empty functions, one function of 9 MB,
// a module past the size limit. (The first two once took 14 s and 725 MiB,
// and 532 MiB, to compile.)
func TestCompileBombsRefused(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, says string
		wasm       []byte
		cfg        Config
	}{
		{"million-functions", "1000000 functions, past the limit of 100000 (Config.MaxFunctions)", emptyFunctions(1_000_000), Config{}},
		{"huge-function", "function 0 has 9437184 bytes of code, past the limit of 1048576 (Config.MaxFunctionSize)", hugeFunction(9 << 20), Config{}},
		{"module-size", "past the limit of 1024 (Config.MaxModuleSize)", emptyFunctions(1000), Config{MaxModuleSize: 1024}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := NewRuntime(ctx, tt.cfg)
			must(t, err)
			defer rt.Close(ctx)
			start := time.Now()
			_, err = rt.Compile(ctx, tt.wasm)
			t.Logf("refused in %s: %v", time.Since(start), err)
			if !errors.Is(err, ErrCompileLimit) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("compile: %v; want ErrCompileLimit saying %q", err, tt.says)
			}
		})
	}
}

// A module under every limit compiles, and is cached as before.
func TestCompileUnderLimits(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{MaxFunctions: 1000, MaxFunctionSize: 1 << 10})
	must(t, err)
	defer rt.Close(ctx)
	wasm := moduleOf(emptyBodies(1000)...)
	m, err := rt.Compile(ctx, wasm)
	must(t, err)
	again, err := rt.Compile(ctx, wasm)
	must(t, err)
	if m != again {
		t.Fatal("the same bytes compiled twice")
	}
}

func emptyBodies(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte{0, 0x0b}
	}
	return out
}

// Compiling stops at Config.CompileTimeout, and when its caller's context
// ends, with ErrCompileLimit; a later Compile with time enough succeeds.
func TestCompileStopsAtItsDeadline(t *testing.T) {
	ctx := context.Background()
	wasm := emptyFunctions(20_000)
	rt, err := NewRuntime(ctx, Config{CompileTimeout: time.Nanosecond})
	must(t, err)
	defer rt.Close(ctx)
	if _, err := rt.Compile(ctx, wasm); !errors.Is(err, ErrCompileLimit) || !strings.Contains(err.Error(), "CompileTimeout") {
		t.Fatalf("compile past its timeout: %v", err)
	}
	rt2, err := NewRuntime(ctx, Config{})
	must(t, err)
	defer rt2.Close(ctx)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := rt2.Compile(cancelled, wasm); !errors.Is(err, ErrCompileLimit) {
		t.Fatalf("compile with its context ended: %v", err)
	}
	if _, err := rt2.Compile(ctx, wasm); err != nil {
		t.Fatalf("compile with time enough: %v", err)
	}
}

// DeniedImports names the WASI functions a policy does not allow that a
// module imports, reading only its bytes.
func TestDeniedImports(t *testing.T) {
	wasm := writerModule([]byte("x")) // imports fd_write
	for _, tt := range []struct {
		p    Policy
		want string
	}{
		{Policy{}, ""},
		{Policy{Imports: []string{"fd_write"}}, ""},
		{Policy{Imports: []string{"fd_read"}}, "fd_write"},
	} {
		got, err := tt.p.DeniedImports(wasm)
		if err != nil || strings.Join(got, ",") != tt.want {
			t.Errorf("imports %v: %v, %v; want %q", tt.p.Imports, got, err, tt.want)
		}
	}
	// A Go-built module imports some functions twice; each is named once.
	twice := []byte("\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00\x02")
	imp := append([]byte{22}, "wasi_snapshot_preview1"...)
	imp = append(append(append(imp, 8), "fd_write"...), 0x00, 0x00)
	body := append(append([]byte{2}, imp...), imp...)
	twice = append(append(twice, byte(len(body))), body...)
	if got, err := (Policy{Imports: []string{}}).DeniedImports(twice); err != nil || strings.Join(got, ",") != "fd_write" {
		t.Errorf("a function imported twice: %v, %v; want it named once", got, err)
	}
	if _, err := (Policy{}).DeniedImports([]byte("\x00asm\x01\x00\x00\x00\x02\x05\x01\x03abc")); !errors.Is(err, errInvalidModule) {
		t.Errorf("a truncated import section: %v", err)
	}
}

// FuzzModuleChecks: the readers that look at a module before it compiles
// — its limits and its imports — take any bytes without panicking, and
// refuse what they cannot read with errInvalidModule or ErrCompileLimit.
func FuzzModuleChecks(f *testing.F) {
	f.Add(writerModule([]byte("hello")))
	f.Add(emptyFunctions(3))
	f.Add(hugeFunction(64))
	f.Fuzz(func(t *testing.T, wasm []byte) {
		limits := Config{MaxFunctions: 8, MaxFunctionSize: 32, MaxModuleSize: 1 << 16}.limits()
		if err := limits.check(wasm); err != nil && !errors.Is(err, errInvalidModule) && !errors.Is(err, ErrCompileLimit) {
			t.Fatalf("limits: %v", err)
		}
		if _, err := (Policy{}).DeniedImports(wasm); err != nil && !errors.Is(err, errInvalidModule) {
			t.Fatalf("imports: %v", err)
		}
	})
}

// A module of a million entries in a section other than code — here a
// function section claiming a million functions over no code section — is
// refused before it is decoded, as a million functions are.
func TestCompileRefusesHugeSections(t *testing.T) {
	funcs := binary.AppendUvarint(nil, 1_000_000)
	funcs = append(funcs, make([]byte, 1_000_000)...)
	wasm := []byte("\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00\x03")
	wasm = binary.AppendUvarint(wasm, uint64(len(funcs)))
	wasm = append(wasm, funcs...)
	_, err := testRT.Compile(context.Background(), wasm)
	if !errors.Is(err, ErrCompileLimit) || !strings.Contains(err.Error(), "1000000 functions") {
		t.Fatalf("compile: %v", err)
	}
}
