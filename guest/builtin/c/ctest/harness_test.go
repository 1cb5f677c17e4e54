package ctest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// cSources are the C files under test, relative to this package.
var cSources = []string{"../regex.c", "../glob.c", "../utf8.c", "testdata/harness.c"}

// clangFlags build the harness the way a small WASI module is built: plain
// C11, every warning an error, the default stack size.
var clangFlags = []string{
	"--target=wasm32-wasi", "-mexec-model=reactor", "-std=c11", "-O2",
	"-Wall", "-Wextra", "-Werror",
}

var (
	buildOnce sync.Once
	wasmBytes []byte
	buildErr  error
)

// errNoClang means the machine cannot build the harness.
var errNoClang = errors.New("clang is not installed (it needs the wasm32-wasi target and wasi-libc)")

// buildHarness compiles the harness once per test binary.
func buildHarness() ([]byte, error) {
	buildOnce.Do(func() {
		clang, err := exec.LookPath("clang")
		if err != nil {
			buildErr = errNoClang
			return
		}
		dir, err := os.MkdirTemp("", "ctest")
		if err != nil {
			buildErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "harness.wasm")
		args := append(append([]string{}, clangFlags...), "-o", out)
		cmd := exec.Command(clang, append(args, cSources...)...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("clang: %v\n%s", err, msg)
			return
		}
		wasmBytes, buildErr = os.ReadFile(out)
	})
	return wasmBytes, buildErr
}

// harness is one instance of the harness module.
type harness struct {
	ctx                      context.Context
	rt                       wazero.Runtime
	mem                      api.Memory
	buf, errbuf              uint32
	reTest, globTest, errLen api.Function
}

// newHarness builds and instantiates the harness, skipping the test when
// clang is missing, unless CI=true.
func newHarness(tb testing.TB) *harness {
	tb.Helper()
	bin, err := buildHarness()
	if errors.Is(err, errNoClang) && os.Getenv("CI") != "true" {
		tb.Skip("skipping: " + err.Error())
	}
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	tb.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	mod, err := rt.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		tb.Fatal(err)
	}
	h := &harness{ctx: ctx, rt: rt, mem: mod.Memory(),
		reTest: mod.ExportedFunction("re_test"), globTest: mod.ExportedFunction("glob_test"),
		errLen: mod.ExportedFunction("err_len")}
	h.buf = uint32(h.call(tb, mod.ExportedFunction("buf")))
	h.errbuf = uint32(h.call(tb, mod.ExportedFunction("errbuf")))
	return h
}

func (h *harness) call(tb testing.TB, f api.Function, args ...uint64) int32 {
	tb.Helper()
	res, err := f.Call(h.ctx, args...)
	if err != nil {
		tb.Fatalf("harness: %v", err)
	}
	return int32(res[0])
}

// bufSize is the size of the harness's input buffer.
const bufSize = 1 << 20

// regex compiles pattern in C and matches it against each line. It returns
// the per-line results, or the compile error text.
func (h *harness) regex(tb testing.TB, pattern string, icase bool, lines ...string) ([]bool, string) {
	tb.Helper()
	data := []byte(pattern)
	for _, l := range lines {
		data = append(data, l...)
	}
	lensOff := (len(data) + 3) &^ 3
	resOff := lensOff + 4*len(lines)
	if resOff+len(lines) > bufSize {
		tb.Fatalf("case of %d bytes does not fit the harness buffer", resOff+len(lines))
	}
	data = append(data, make([]byte, lensOff-len(data))...)
	for _, l := range lines {
		data = binary.LittleEndian.AppendUint32(data, uint32(len(l)))
	}
	h.mem.Write(h.buf, data)
	ic := uint64(0)
	if icase {
		ic = 1
	}
	n := h.call(tb, h.reTest, uint64(len(pattern)), ic, uint64(len(lines)), uint64(lensOff), uint64(resOff))
	if n < 0 {
		size := h.call(tb, h.errLen)
		msg, _ := h.mem.Read(h.errbuf, uint32(size))
		return nil, string(msg)
	}
	res, _ := h.mem.Read(h.buf+uint32(resOff), uint32(len(lines)))
	out := make([]bool, len(lines))
	for i, b := range res {
		out[i] = b == 1
	}
	return out, ""
}

// glob returns glob_valid(pattern) and glob_match(pattern, path) from C.
func (h *harness) glob(tb testing.TB, pattern, path string) (valid, match bool) {
	tb.Helper()
	if len(pattern)+len(path) > bufSize {
		tb.Fatalf("case of %d bytes does not fit the harness buffer", len(pattern)+len(path))
	}
	h.mem.Write(h.buf, []byte(pattern+path))
	r := h.call(tb, h.globTest, uint64(len(pattern)), uint64(len(path)))
	return r&2 != 0, r&1 != 0
}
