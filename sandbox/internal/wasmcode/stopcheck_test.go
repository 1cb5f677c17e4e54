package wasmcode

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/guest/builtin"
	"github.com/tetratelabs/wazero"
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
		got, err := checkCode(codeSection(code...), 2, []uint64{0})
		must(t, err)
		body := []byte{0x01, 0x01, 0x7f} // the turns local, local 0
		if c.entry {
			body = append(body, check...)
		}
		body = append(body, c.before...)
		body = append(body, 0x03, 0x40)
		body = append(body, loopCheckSequence(check, 0)...)
		body = append(body, loop[2:]...)
		body = append(body, 0x0b, 0x0b)
		want := binary.AppendUvarint([]byte{0x01}, uint64(len(body)))
		want = append(want, body...)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\ngot  % x\nwant % x", c.name, got, want)
		}
	}
	// A function without a loop is checked at its entry.
	got, err := checkCode(codeSection(0x41, 0x01, 0x1a, 0x0b), 2, []uint64{0})
	must(t, err)
	body := append(append([]byte{0x01, 0x01, 0x7f}, check...), 0x41, 0x01, 0x1a, 0x0b)
	if want := append(binary.AppendUvarint([]byte{0x01}, uint64(len(body))), body...); !bytes.Equal(got, want) {
		t.Errorf("no loop:\ngot  % x\nwant % x", got, want)
	}
}

// The fuel constants are signed LEB128, as i32.const reads them, and the
// sign bit of 8192's second byte makes that differ from unsigned LEB128.
func TestAppendSLEB(t *testing.T) {
	for _, v := range []int64{0, 1, 63, 64, -1, -64, -65, 8192, 1 << 20, -1 << 31} {
		r := &Reader{P: appendSLEB(nil, v)}
		if got := r.sleb(); got != v || len(r.P) != 0 || r.Err != nil {
			t.Errorf("%d: read back %d (%d bytes left, %v)", v, got, len(r.P), r.Err)
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
		if _, err := checkCode(code, 2, []uint64{0}); err == nil {
			t.Errorf("%s of a global past the module's own: no error", name)
		}
	}
	for _, g := range []byte{0x02, 0x03} {
		if _, err := checkCode(codeSection(0x41, 0x00, 0x24, g, 0x0b), 2, []uint64{0}); err == nil {
			t.Errorf("global.set %d, the stop or the fuel global: no error", g)
		}
	}
	if _, err := checkCode(codeSection(0x41, 0x00, 0x24, 0x01, 0x0b), 2, []uint64{0}); err != nil {
		t.Errorf("global.set of the module's own global: %v", err)
	}
}

// Code that names a local its function does not declare is refused: it
// would name the local that counts a loop's turns, and a guest that set
// it could keep its loops from ever reaching their check.
func TestCheckCodeRefusesForeignLocals(t *testing.T) {
	// One parameter and two declared i64 locals: locals 0 to 2 are the
	// function's own, 3 is the turns local.
	fn := func(instrs ...byte) []byte {
		body := append([]byte{0x01, 0x02, 0x7e}, instrs...)
		return append(binary.AppendUvarint([]byte{0x01}, uint64(len(body))), body...)
	}
	for name, code := range map[string][]byte{
		"local.set": fn(0x41, 0x05, 0x21, 0x03, 0x0b),
		"local.get": fn(0x20, 0x03, 0x1a, 0x0b),
		"local.tee": fn(0x41, 0x05, 0x22, 0x03, 0x1a, 0x0b),
		"far past":  fn(0x20, 0x80, 0x80, 0x04, 0x1a, 0x0b),
	} {
		if _, err := checkCode(code, 0, []uint64{1}); err == nil {
			t.Errorf("%s of the turns local: no error", name)
		}
	}
	got, err := checkCode(fn(0x20, 0x02, 0x1a, 0x03, 0x40, 0x0b, 0x0b), 0, []uint64{1})
	must(t, err)
	check := checkSequence(0)
	body := []byte{0x02, 0x02, 0x7e, 0x01, 0x7f} // it runs into its loop: no entry check
	body = append(body, 0x20, 0x02, 0x1a, 0x03, 0x40)
	body = append(body, loopCheckSequence(check, 3)...)
	body = append(body, 0x0b, 0x0b)
	if want := append(binary.AppendUvarint([]byte{0x01}, uint64(len(body))), body...); !bytes.Equal(got, want) {
		t.Errorf("the function's own local 2 and a loop:\ngot  % x\nwant % x", got, want)
	}
}

// A function's parameters come before its locals: paramCounts reads how
// many each function has from its type.
func TestParamCounts(t *testing.T) {
	types := []byte{0x02,
		0x60, 0x00, 0x00, // () -> ()
		0x60, 0x03, 0x7f, 0x7e, 0x7d, 0x01, 0x7f} // (i32 i64 f32) -> i32
	got, err := paramCounts(types, []byte{0x03, 0x01, 0x00, 0x01})
	must(t, err)
	if want := []uint64{3, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("paramCounts = %v, want %v", got, want)
	}
	if _, err := paramCounts(types, []byte{0x01, 0x02}); err == nil {
		t.Error("a function of type 2 of 2: no error")
	}
	if _, err := checkCode(codeSection(0x0b), 0, nil); err == nil {
		t.Error("code for a function without a type: no error")
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
		if _, err := checkCode(code, 0, []uint64{0}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzStopChecks feeds the rewrite arbitrary modules: it must never panic,
// what it returns must be a module whose sections read back, and a module
// wazero takes must still be one it takes once rewritten.
func FuzzStopChecks(f *testing.F) {
	for _, wasm := range watModules(f) {
		f.Add(wasm)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, wasm []byte) {
		sc, err := WithStopChecks(wasm)
		if err != nil {
			return
		}
		secs, err := Sections(sc.Code)
		if err != nil {
			t.Fatalf("rewritten module does not read back: %v", err)
		}
		if exports, err := ExportNames(secs[SecExport]); err != nil || !exports[StopExport] {
			t.Fatalf("rewritten module lacks %s: %v", StopExport, err)
		}
		if m, err := rt.CompileModule(ctx, wasm); err == nil {
			m.Close(ctx)
			m, err := rt.CompileModule(ctx, sc.Code)
			if err != nil {
				t.Fatalf("wazero takes the module but not its rewrite: %v", err)
			}
			m.Close(ctx)
		}
	})
}

// BenchmarkStopChecksRewrite is the rewrite of the built-in module, which
// every process start pays once per module.
//
//	go test ./sandbox/internal/wasmcode -run '^$' -bench StopChecksRewrite
func BenchmarkStopChecksRewrite(b *testing.B) {
	b.SetBytes(int64(len(builtin.Module)))
	for i := 0; i < b.N; i++ {
		if _, err := WithStopChecks(builtin.Module); err != nil {
			b.Fatal(err)
		}
	}
}

// watModules are the committed modules of the sandbox's testdata/wat.
func watModules(tb testing.TB) map[string][]byte {
	names, err := filepath.Glob("../../testdata/wat/*.wasm")
	if err != nil || len(names) == 0 {
		tb.Fatalf("no modules in ../../testdata/wat: %v", err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(n), ".wasm")] = b
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A function declaring more locals than the rewrite takes is refused,
// however the count is written: one that wrapped round 2^64 would have
// put the turns local on a local of the guest's own.
func TestCheckCodeRefusesTooManyLocals(t *testing.T) {
	for name, decl := range map[string][]byte{
		"one group":           binary.AppendUvarint([]byte{0x01}, maxLocals),
		"two groups":          append(binary.AppendUvarint([]byte{0x02}, maxLocals/2), append([]byte{0x7f}, binary.AppendUvarint(nil, maxLocals/2)...)...),
		"wrapping round 2^64": append(binary.AppendUvarint([]byte{0x02}, 1), append([]byte{0x7f}, binary.AppendUvarint(nil, 1<<64-1)...)...),
	} {
		body := append(append(decl, 0x7f), 0x0b)
		code := append(binary.AppendUvarint([]byte{0x01}, uint64(len(body))), body...)
		if _, err := checkCode(code, 0, []uint64{0}); err == nil || !strings.Contains(err.Error(), "locals") {
			t.Errorf("%s: %v, want an error about too many locals", name, err)
		}
	}
}
