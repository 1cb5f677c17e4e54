package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest/builtin"
	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// The preinit guest (testdata/preinit) built both ways, once.
var preinitGuest struct {
	once              sync.Once
	reactor, command  []byte
	errReact, errComm error
}

// preinitWasm is the preinit guest's bytes, built as a reactor and as a
// command the first time a test asks.
func preinitWasm(t testing.TB) (reactor, command []byte) {
	t.Helper()
	g := &preinitGuest
	g.once.Do(func() {
		g.reactor, g.errReact = buildPackage("./testdata/preinit", "c-shared")
		g.command, g.errComm = buildPackage("./testdata/preinit", "exe")
	})
	must(t, errors.Join(g.errReact, g.errComm))
	return g.reactor, g.command
}

// preinitModules compiles the preinit guest (see preinitWasm) in a
// Runtime of the test's own.
func preinitModules(t testing.TB) (reactor, command *Module) {
	t.Helper()
	g := &preinitGuest
	preinitWasm(t)
	// A runtime of the test's own: a module's snapshots, spares and kept
	// memories live as long as its runtime, and one test's must not be
	// another's (or the same test's, run again with -count).
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
	must(t, err)
	t.Cleanup(func() { rt.Close(ctx) })
	r, err := rt.Compile(ctx, g.reactor)
	must(t, err)
	c, err := rt.Compile(ctx, g.command)
	must(t, err)
	return r, c
}

// probeOut is what the preinit guest's tool reports.
type probeOut struct {
	Counter         int      `json:"counter"`
	LeftOpen        bool     `json:"left_open"`
	Workspace       []string `json:"workspace"`
	Now             string   `json:"now"`
	InitTime        string   `json:"init_time"`
	CryptoRand      string   `json:"crypto_rand"`
	MathRand        uint64   `json:"math_rand"`
	Environ         []string `json:"environ"`
	Args            []string `json:"args"`
	GetenvProbe     string   `json:"getenv_probe"`
	NonZero         int      `json:"non_zero"`
	WorkspaceRights uint64   `json:"workspace_rights"`
}

func probe(t *testing.T, m *Module, p Policy, input string) probeOut {
	t.Helper()
	req := abi.Request{ABI: abi.Version, Tool: "probe", CallID: "c", Input: input, Workspace: abi.WorkspaceDir}
	r, err := m.Call(context.Background(), p, req)
	if err != nil {
		t.Fatalf("call: %v (stderr %q)", err, r.Stderr)
	}
	if r.Response.Error != "" {
		t.Fatalf("tool error: %s", r.Response.Error)
	}
	var out probeOut
	must(t, json.Unmarshal([]byte(r.Response.Output), &out))
	return out
}

// workspace makes a workspace holding the named empty files.
func workspace(t *testing.T, files ...string) []Mount {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		must(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
	}
	return []Mount{{HostPath: dir, GuestPath: abi.WorkspaceDir}}
}

// TestPreinitCallSeesNothingOfPreviousCall runs two calls from one snapshot
// and checks the second sees its own memory, files, environment,
// arguments, clock and randomness, never the first call's.
func TestPreinitCallSeesNothingOfPreviousCall(t *testing.T) {
	m, _ := preinitModules(t)
	if m.pre == nil {
		t.Fatal("a module built with -buildmode=c-shared is not in the fast mode")
	}
	before := snapshotCount(m)
	first := probe(t, m, Policy{Mounts: workspace(t, "first.txt"), Env: map[string]string{"PROBE": "one"}}, `{"write":"made.txt"}`)
	second := probe(t, m, Policy{Mounts: workspace(t, "second.txt")}, `{}`)
	third := probe(t, m, Policy{Mounts: workspace(t), Env: map[string]string{"PROBE": "three"}, Args: []string{"x"}}, `{}`)

	if first.Counter != 1 || second.Counter != 1 || third.Counter != 1 {
		t.Errorf("memory: counters %d, %d, %d; want 1 in every call", first.Counter, second.Counter, third.Counter)
	}
	if second.LeftOpen {
		t.Error("memory: the second call sees the file the first left open")
	}
	if want := []string{"first.txt"}; !reflect.DeepEqual(first.Workspace, want) {
		t.Errorf("files: first call lists %v, want %v", first.Workspace, want)
	}
	if want := []string{"second.txt"}; !reflect.DeepEqual(second.Workspace, want) {
		t.Errorf("files: second call lists %v, want %v", second.Workspace, want)
	}
	if first.GetenvProbe != "one" || second.GetenvProbe != "" || third.GetenvProbe != "three" {
		t.Errorf("environment: PROBE is %q, %q, %q; want one, empty, three", first.GetenvProbe, second.GetenvProbe, third.GetenvProbe)
	}
	if len(second.Environ) != 0 || !reflect.DeepEqual(third.Environ, []string{"PROBE=three"}) {
		t.Errorf("environment: second call has %v, third %v", second.Environ, third.Environ)
	}
	if !reflect.DeepEqual(second.Args, []string{"tool"}) || !reflect.DeepEqual(third.Args, []string{"tool", "x"}) {
		t.Errorf("arguments: %v and %v", second.Args, third.Args)
	}
	// The deterministic clock and randomness: every call reads the same.
	if first.Now != second.Now || first.CryptoRand != second.CryptoRand || first.MathRand != second.MathRand {
		t.Errorf("deterministic clock and randomness differ between calls: %+v and %+v", first, second)
	}
	if !(first.InitTime < first.Now) {
		t.Errorf("clock: the call's time %s is not after the initialisation's %s", first.Now, first.InitTime)
	}
	if n := snapshotCount(m) - before; n > 1 {
		t.Errorf("%d snapshots taken for three calls with the same mounts, want at most 1", n)
	}
}

func snapshotCount(m *Module) int {
	m.pre.mu.Lock()
	defer m.pre.mu.Unlock()
	return len(m.pre.snaps)
}

// TestPreinitSpareServesTheNextCall: after a call, a spare instance for a
// policy like its own is made in the background, and the next such call
// runs in it, seeing its own workspace, memory and open files, not the
// first call's nor the spare's.
func TestPreinitSpareServesTheNextCall(t *testing.T) {
	m, _ := preinitModules(t)
	p1 := Policy{Mounts: workspace(t, "first.txt")}
	first := probe(t, m, p1, `{"write":"made.txt"}`)
	m.r.bg.Wait()
	snap, key := snapshotOf(t, m, p1), spareKeyOf(p1)
	snap.spares.mu.Lock()
	var spare *spare
	if list := snap.spares.ready[key]; len(list) == 1 {
		spare = list[0]
	}
	snap.spares.mu.Unlock()
	if spare == nil {
		t.Fatal("not one spare was made after the first call")
	}

	second := probe(t, m, Policy{Mounts: workspace(t, "second.txt")}, `{}`)
	snap.spares.mu.Lock()
	taken := !slices.Contains(snap.spares.ready[key], spare)
	snap.spares.mu.Unlock()
	if !taken {
		t.Fatal("the second call did not take the spare")
	}
	if want := []string{"first.txt"}; !reflect.DeepEqual(first.Workspace, want) {
		t.Errorf("first call lists %v, want %v", first.Workspace, want)
	}
	if want := []string{"second.txt"}; !reflect.DeepEqual(second.Workspace, want) {
		t.Errorf("the spare's call lists %v, want %v", second.Workspace, want)
	}
	if second.Counter != 1 || second.LeftOpen {
		t.Errorf("the spare's call: counter %d, sees a file left open %v; want 1, false", second.Counter, second.LeftOpen)
	}
	if first.Now != second.Now || first.CryptoRand != second.CryptoRand {
		t.Errorf("the spare's call reads another clock or randomness: %+v and %+v", first, second)
	}
}

// TestPreinitReusedMemoryHoldsNothingOfTheLastCall: a call fills memory
// it grew with a pattern; the calls after it, whose instances are made in
// that memory once it is reset (see memoryImage), find the memory they
// grow zero and their globals the snapshot's.
func TestPreinitReusedMemoryHoldsNothingOfTheLastCall(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	probe(t, m, p, `{"fill":16}`)
	for range 2 {
		m.r.bg.Wait() // the spare is made, in the reset memory
		if out := probe(t, m, p, `{"check":16}`); out.NonZero != 0 || out.Counter != 1 {
			t.Fatalf("a later call sees %d non-zero bytes of fresh memory and counter %d; want 0 and 1", out.NonZero, out.Counter)
		}
	}
}

// takenSnapshot returns m's runtime, compiled module and snapshot for p,
// taking the snapshot if there is none.
func takenSnapshot(tb testing.TB, m *Module, p Policy) (wazero.Runtime, wazero.CompiledModule, *snapshot) {
	tb.Helper()
	ctx := context.Background()
	cm, err := m.compiledFor(ctx, p.memoryPages())
	must(tb, err)
	rt, err := m.runtime(ctx, p.memoryPages())
	must(tb, err)
	snap, err := m.pre.snapshotFor(ctx, m, rt, cm, p)
	must(tb, err)
	return rt, cm, snap
}

// snapshotOf returns m's snapshot for p.
func snapshotOf(t *testing.T, m *Module, p Policy) *snapshot {
	t.Helper()
	m.pre.mu.Lock()
	defer m.pre.mu.Unlock()
	s, ok := m.pre.snaps[keyOf(p)]
	if !ok {
		t.Fatal("no snapshot for the policy")
	}
	return s
}

// TestPreinitRealRandom: calls granted real randomness get their own,
// both from WASI (crypto/rand) and from the Go runtime's generator, which
// is seeded at init.
func TestPreinitRealRandom(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t), RealRandom: true}
	a, b := probe(t, m, p, `{}`), probe(t, m, p, `{}`)
	if a.CryptoRand == b.CryptoRand {
		t.Errorf("crypto/rand gave %s to both calls", a.CryptoRand)
	}
	if a.MathRand == b.MathRand {
		t.Errorf("math/rand/v2 gave %d to both calls", a.MathRand)
	}
	if a.Counter != 1 || b.Counter != 1 {
		t.Errorf("counters %d, %d; want 1", a.Counter, b.Counter)
	}
}

// TestPreinitRealClock: a call granted the clock reads the host's time,
// not the snapshot's.
func TestPreinitRealClock(t *testing.T) {
	m, _ := preinitModules(t)
	out := probe(t, m, Policy{Mounts: workspace(t), RealClock: true}, `{}`)
	now, err := time.Parse(time.RFC3339Nano, out.Now)
	must(t, err)
	if d := time.Since(now); d < -time.Minute || d > time.Minute {
		t.Errorf("the call read %s, the host %s", now, time.Now())
	}
}

// TestPreinitSnapshotPerMounts: a call whose mounts differ from an
// earlier one's gets a snapshot of its own, and sees its own mounts.
func TestPreinitSnapshotPerMounts(t *testing.T) {
	m, _ := preinitModules(t)
	probe(t, m, Policy{Mounts: workspace(t, "a")}, `{}`)
	ro := append(workspace(t, "b"), Mount{HostPath: t.TempDir(), GuestPath: "/ro", ReadOnly: true})
	if out := probe(t, m, Policy{Mounts: ro}, `{}`); !reflect.DeepEqual(out.Workspace, []string{"b"}) {
		t.Errorf("the call with two mounts lists %v", out.Workspace)
	}
	m.pre.mu.Lock()
	defer m.pre.mu.Unlock()
	if len(m.pre.snaps) < 2 {
		t.Errorf("%d snapshots for two mount layouts", len(m.pre.snaps))
	}
}

// TestPreinitSameAsCommand: the same source built as a command answers
// the same.
func TestPreinitSameAsCommand(t *testing.T) {
	react, command := preinitModules(t)
	if command.pre != nil {
		t.Fatal("a command module is in the fast mode")
	}
	p := Policy{Mounts: workspace(t, "f"), Env: map[string]string{"PROBE": "p"}}
	a, b := probe(t, react, p, `{}`), probe(t, command, p, `{}`)
	a.Now, a.InitTime, b.Now, b.InitTime = "", "", "", ""
	a.CryptoRand, a.MathRand, b.CryptoRand, b.MathRand = "", 0, "", 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("fast mode %+v\ncommand   %+v", a, b)
	}
}

// TestBuiltinIsFastMode: the embedded built-in tools are a fast-mode
// module, they answer, and Describe asks them for their manifest.
func TestBuiltinIsFastMode(t *testing.T) {
	ctx := context.Background()
	m, err := testRT.Compile(ctx, builtin.Module)
	must(t, err)
	if m.pre == nil {
		t.Fatal("the built-in module is not in the fast mode")
	}
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "f.txt"), []byte("hello\n"), 0o644))
	p := Policy{Mounts: []Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: true}}}
	r, err := m.Call(ctx, p, abi.Request{ABI: abi.Version, Tool: "read_file", Input: `{"path":"f.txt"}`, Workspace: abi.WorkspaceDir})
	must(t, err)
	if r.Response.Error != "" || !strings.Contains(r.Response.Output, "hello") {
		t.Errorf("read_file: %+v", r.Response)
	}
	described, err := m.Describe(ctx)
	must(t, err)
	packed, err := m.manifest()
	must(t, err)
	if !reflect.DeepEqual(described, packed) {
		t.Errorf("Describe gave %+v, the section holds %+v", described, packed)
	}
}

// TestNewReactor: only a module exporting the fast mode's functions, and
// no _start, is rewritten; the rewrite exports every mutable global and
// leaves no active data segment.
func TestNewReactor(t *testing.T) {
	preinitModules(t)
	if _, err := wasmcode.NewReactor(preinitGuest.command); !errors.Is(err, wasmcode.ErrNotReactor) {
		t.Errorf("command module: %v, want wasmcode.ErrNotReactor", err)
	}
	if _, err := wasmcode.NewReactor([]byte("not wasm")); !errors.Is(err, errInvalidModule) {
		t.Errorf("junk: %v, want errInvalidModule", err)
	}
	rx, err := wasmcode.NewReactor(preinitGuest.reactor)
	must(t, err)
	if len(rx.Globals) == 0 || len(rx.Data) == 0 {
		t.Fatalf("%d globals, %d runs of data", len(rx.Globals), len(rx.Data))
	}
	secs, err := wasmcode.Sections(rx.Code)
	must(t, err)
	if _, data, err := wasmcode.EmptyDataSegments(secs[wasmcode.SecData]); err != nil || len(data) != 0 {
		t.Errorf("the rewritten module still has %d runs of data (%v)", len(data), err)
	}
	exports, err := wasmcode.ExportNames(secs[wasmcode.SecExport])
	must(t, err)
	for _, g := range rx.Globals {
		if !exports[g] {
			t.Errorf("the rewritten module does not export %s", g)
		}
	}
	if _, err := wasmcode.NewReactor(append(preinitGuest.reactor[:len(preinitGuest.reactor):len(preinitGuest.reactor)], 0x0b, 0xff)); err == nil {
		t.Error("a truncated section was accepted")
	}
}

// buildPackage builds the package pkg for wasip1 with -buildmode=mode.
func buildPackage(pkg, mode string) ([]byte, error) {
	out := filepath.Join(guestsDir, strings.ReplaceAll(pkg, "/", "_")+"-"+mode+".wasm")
	cmd := exec.Command("go", "build", "-buildmode="+mode, "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, errors.New(err.Error() + "\n" + string(b))
	}
	return os.ReadFile(out)
}

// BenchmarkPreinitInstance is the part of a fast-mode call of the
// built-in tools that is not the call: a fresh instance restored from the
// snapshot, then closed, with nothing run in it. It is the floor under
// BenchmarkReadFile/wasm-preinit; most of it is wazero instantiating a
// module of some 3,000 functions (its table is filled afresh for every
// instance).
//
//	go test ./sandbox -run '^$' -bench PreinitInstance -benchtime 2000x
func BenchmarkPreinitInstance(b *testing.B) {
	ctx := context.Background()
	m, err := testRT.Compile(ctx, builtin.Module)
	must(b, err)
	p := Policy{Mounts: []Mount{{HostPath: b.TempDir(), GuestPath: abi.WorkspaceDir, ReadOnly: true}}}
	rt, cm, snap := takenSnapshot(b, m, p)
	cfg := detClock(wazero.NewModuleConfig().WithName("").WithStartFunctions(), snap.clockReadings, nil)
	timed(b, func() {
		mod, err := m.restored(ctx, rt, cm, cfg, snap, false)
		must(b, err)
		mod.Close(ctx)
	})
}

// Spares are bounded per snapshot: calls with many environments keep at
// most maxSpares instances, the newest, and the ones dropped are closed.
func TestPreinitSparesAreBounded(t *testing.T) {
	m, _ := preinitModules(t)
	mounts := workspace(t)
	var p Policy
	for i := range maxSpares + 3 {
		p = Policy{Mounts: mounts, Env: map[string]string{"N": strconv.Itoa(i)}}
		probe(t, m, p, `{}`)
		m.r.bg.Wait()
	}
	snap := snapshotOf(t, m, p)
	snap.spares.mu.Lock()
	defer snap.spares.mu.Unlock()
	if len(snap.spares.ready) != maxSpares || len(snap.spares.order) != maxSpares {
		t.Fatalf("spares for %d keys (%d in order), want %d", len(snap.spares.ready), len(snap.spares.order), maxSpares)
	}
	if len(snap.spares.ready[spareKeyOf(p)]) != 1 {
		t.Error("the newest spare was dropped")
	}
}

// Regression: a read-only workspace's preopen reported the rights to
// create, write and remove in it. A fast-mode call reports them only on a
// read-write workspace, whether it takes a spare made for a call on a
// read-only one or the other way round.
func TestPreinitReadOnlyPreopenReportsNoRightToChange(t *testing.T) {
	m, _ := preinitModules(t)
	rw := workspace(t)
	ro := []Mount{rw[0]}
	ro[0].ReadOnly = true
	for i, c := range []struct {
		mounts []Mount
		create bool
	}{{rw, true}, {ro, false}, {ro, false}, {rw, true}, {ro, false}} {
		got := probe(t, m, Policy{Mounts: c.mounts}, `{}`)
		m.r.bg.Wait()
		if has := got.WorkspaceRights&rightPathCreateFile != 0; has != c.create {
			t.Errorf("call %d, read-only %v: rights %#x report PATH_CREATE_FILE %v", i, !c.create, got.WorkspaceRights, has)
		}
		if got.WorkspaceRights&(writing|changing) != 0 && !c.create {
			t.Errorf("call %d on a read-only workspace: rights %#x report changing rights %#x", i, got.WorkspaceRights, got.WorkspaceRights&changing)
		}
	}
}
