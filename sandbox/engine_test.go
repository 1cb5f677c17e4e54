package sandbox

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest/builtin"
)

func TestParseEngine(t *testing.T) {
	for in, want := range map[string]Engine{"": EngineAuto, "auto": EngineAuto, "Compiler": EngineCompiler, " interpreter ": EngineInterpreter} {
		if got, err := ParseEngine(in); err != nil || got != want {
			t.Errorf("ParseEngine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseEngine("jit"); !errors.Is(err, errUnknownEngine) {
		t.Errorf("ParseEngine(jit): %v, want errUnknownEngine", err)
	}
	if _, err := NewRuntime(context.Background(), Config{Engine: "jit"}); !errors.Is(err, errUnknownEngine) {
		t.Errorf("NewRuntime with engine jit: %v, want errUnknownEngine", err)
	}
}

// fakeCgroups points MemoryLimit at a tree of files made for the test:
// /proc/self/cgroup holding self, and the given files under the cgroup
// root.
func fakeCgroups(t *testing.T, self string, files map[string]string) {
	t.Helper()
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("proc/cgroup", self)
	for name, content := range files {
		write(filepath.Join("cg", name), content)
	}
	oldRoot, oldProc := cgroupRoot, procSelf
	cgroupRoot, procSelf = filepath.Join(root, "cg"), filepath.Join(root, "proc")
	t.Cleanup(func() { cgroupRoot, procSelf = oldRoot, oldProc })
}

// processMemoryLimit reads the least limit of the process's cgroup and those
// above it, in cgroup v2 and v1, and GOMEMLIMIT.
func TestMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	debug.SetMemoryLimit(math.MaxInt64)
	cases := []struct {
		name  string
		self  string
		files map[string]string
		want  int64 // 0: none
	}{
		{"v2 leaf", "0::/a/b\n", map[string]string{"a/b/memory.max": "134217728\n", "a/memory.max": "max\n"}, 128 << 20},
		{"v2 parent lower", "0::/a/b\n", map[string]string{"a/b/memory.max": "max\n", "a/memory.max": "67108864\n"}, 64 << 20},
		{"v2 unlimited", "0::/a\n", map[string]string{"a/memory.max": "max\n"}, 0},
		{"v1", "12:cpu,cpuacct:/x\n7:memory:/x\n", map[string]string{"memory/x/memory.limit_in_bytes": "268435456\n",
			"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 256 << 20},
		{"container root", "0::/not/visible\n", map[string]string{"memory.max": "100000000\n"}, 100000000},
		{"no files", "0::/a\n", nil, 0},
		{"garbage", "0::/a\n", map[string]string{"a/memory.max": "lots\n"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fakeCgroups(t, c.self, c.files)
			got, ok := processMemoryLimit()
			if c.want == 0 && ok || c.want != 0 && (!ok || got != c.want) {
				t.Errorf("processMemoryLimit() = %d, %v; want %d", got, ok, c.want)
			}
		})
	}
	t.Run("GOMEMLIMIT lower", func(t *testing.T) {
		fakeCgroups(t, "0::/a\n", map[string]string{"a/memory.max": "134217728\n"})
		debug.SetMemoryLimit(90 << 20)
		defer debug.SetMemoryLimit(math.MaxInt64)
		if got, ok := processMemoryLimit(); !ok || got != 90<<20 {
			t.Errorf("processMemoryLimit() = %d, %v; want GOMEMLIMIT's %d", got, ok, 90<<20)
		}
	})
}

// The choice auto makes: apart only with a cache on disk, a memory limit
// below smallMemory, and a module the cache has not got (no mark, or one
// naming a file not there); never for the other engines.
func TestAutoChoice(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []struct {
		engine Engine
		cache  string
		limit  int64 // 0: none
		marked bool
		want   bool
		noFile bool // the mark names a file not there
	}{
		{EngineAuto, dir, 128 << 20, false, true, false},
		{EngineAuto, dir, 128 << 20, true, false, false},
		{EngineAuto, dir, 128 << 20, true, true, true},
		{EngineAuto, dir, smallMemory, false, false, false},
		{EngineAuto, dir, 0, false, false, false},
		{EngineAuto, "", 128 << 20, false, false, false},
		{EngineCompiler, dir, 128 << 20, false, false, false},
		{EngineInterpreter, dir, 128 << 20, false, false, false},
	} {
		r, err := NewRuntime(ctx, Config{CacheDir: c.cache, Engine: c.engine})
		must(t, err)
		r.memoryLimit = func() (int64, bool) { return c.limit, c.limit != 0 }
		digest := "sha256:test"
		os.RemoveAll(filepath.Join(dir, markDir))
		entry := versionDir() + "/" + strings.Repeat("1", 64)
		os.Remove(filepath.Join(dir, filepath.FromSlash(entry)))
		if c.marked && c.cache != "" {
			if !c.noFile {
				must(t, os.WriteFile(filepath.Join(dir, filepath.FromSlash(entry)), append(entryHeader(), "compiled"...), 0o600))
			}
			r.markEntry(digest, entry)
		}
		if got := r.apart(digest, func() string { return entry }); got != c.want {
			t.Errorf("%s engine, cache %q, limit %d, marked %v: apart %v, want %v", c.engine, c.cache, c.limit, c.marked, got, c.want)
		}
		r.Close(ctx)
	}
}

// The built-in tools answer the same calls alike on the interpreter, on the
// compiler in this process, and compiled apart under a small memory limit
// (auto): and the module compiled apart is in the cache, marked, so that
// the next runtime loads it instead of compiling it again.
func TestEnginesAgree(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "notes.md"), []byte("# Notes\nTODO: measure the base\ndone: rebuild\n"), 0o644))
	must(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
	p := Policy{Mounts: []Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: true}}}
	calls := []abi.Request{
		{Tool: "read_file", Input: `{"path":"notes.md"}`},
		{Tool: "list_dir", Input: `{"path":"."}`},
		{Tool: "grep", Input: `{"path":".","pattern":"^TODO"}`},
		{Tool: "read_file", Input: `{"path":"missing.md"}`},
	}
	answers := func(t *testing.T, r *Runtime, want Engine) []abi.Response {
		m, err := r.Compile(ctx, builtin.Module)
		must(t, err)
		if m.engine() != want {
			t.Fatalf("module runs on %s, want %s", m.engine(), want)
		}
		var out []abi.Response
		for _, req := range calls {
			req.ABI, req.Workspace = abi.Version, abi.WorkspaceDir
			res, err := m.Call(ctx, p, req)
			must(t, err)
			out = append(out, res.Response)
		}
		return out
	}
	want := answers(t, testRT, EngineCompiler)

	interp, err := NewRuntime(ctx, Config{Engine: EngineInterpreter})
	must(t, err)
	defer interp.Close(ctx)
	if got := answers(t, interp, EngineInterpreter); !sameResponses(got, want) {
		t.Errorf("interpreter answers %q, compiler %q", got, want)
	}

	cache := t.TempDir()
	small := func() (int64, bool) { return 128 << 20, true }
	auto, err := NewRuntime(ctx, Config{CacheDir: cache})
	must(t, err)
	defer auto.Close(ctx)
	auto.memoryLimit = small
	digest := digestOf(builtin.Module)
	if !auto.apart(digest, func() string { return "" }) {
		t.Fatal("a cold cache under 128 MiB: auto does not compile apart")
	}
	if got := answers(t, auto, EngineCompiler); !sameResponses(got, want) {
		t.Errorf("compiled apart answers %q, in process %q", got, want)
	}
	if !auto.cached(digest) {
		t.Error("the module compiled apart is not marked in the cache")
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "wazero-*", "*")); len(files) == 0 {
		t.Error("the compile cache holds no compiled module")
	}
	again, err := NewRuntime(ctx, Config{CacheDir: cache})
	must(t, err)
	defer again.Close(ctx)
	again.memoryLimit = small
	m := auto.modules[digest]
	if again.apart(digest, func() string { return entryName(m.wasm, !m.stops) }) {
		t.Error("a warm cache under 128 MiB: auto compiles apart again")
	}
}

// A module the compiler refuses, compiled apart, is errInvalidModule, and
// nothing is marked for it.
func TestCompileApartInvalid(t *testing.T) {
	ctx := context.Background()
	r, err := NewRuntime(ctx, Config{CacheDir: t.TempDir()})
	must(t, err)
	defer r.Close(ctx)
	r.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	bad := []byte("\x00asm\x01\x00\x00\x00\x01\x03\x01\x42\x00")
	if _, err := r.Compile(ctx, bad); !errors.Is(err, errInvalidModule) {
		t.Fatalf("compile an invalid module apart: %v, want errInvalidModule", err)
	}
	if r.cached(digestOf(bad)) {
		t.Error("an invalid module is marked as compiled")
	}
}

// Regression: the process compiling apart compiled every module as one
// with stop checks, whose instances are not closed when their context
// ends. A module the stop-check rewrite refuses (here one without memory)
// runs in a runtime that closes them, which wazero keeps in a file of
// another name: the file compiled apart was not the one loaded, and the
// module was compiled again in this process, past the memory limit
// compiling apart is for. The cache holds the one file, compiled apart,
// which the process loads.
func TestModuleWithoutStopChecksCompiledApartIsLoadedFromTheCache(t *testing.T) {
	dir := t.TempDir()
	rt := boundedRuntime(t, dir, -1)
	rt.memoryLimit = func() (int64, bool) { return 128 << 20, true }
	m := compileWait(t, rt, "nomem")
	if m.stops {
		t.Fatal("nomem.wasm took stop checks; it is to be a module the rewrite refuses")
	}
	if n := rt.apartRuns.Load(); n != 1 {
		t.Fatalf("a cold cache under 128 MiB: %d compiles apart, want 1", n)
	}
	files, err := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	must(t, err)
	loaded := entryOf(t, dir, m)
	if len(files) != 1 || files[0] != loaded {
		t.Errorf("the compile cache holds %q; want only the file compiled apart, which this process loaded (%s)", files, loaded)
	}
	ex, err := m.Run(context.Background(), Policy{}, nil, io.Discard, io.Discard)
	if err != nil || ex.Code != 0 {
		t.Errorf("run: exit %d, %v; want exit 0", ex.Code, err)
	}
}

func sameResponses(a, b []abi.Response) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
