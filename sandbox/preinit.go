package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// preinit is the fast mode of a Module (see abi, "The fast mode"): the
// module is initialised once per snapshotKey, and every call starts in a
// fresh instance restored from that snapshot instead of initialising
// again. RATIONALE.md says why; snapshot.go says what a snapshot holds.
type preinit struct {
	rx *wasmcode.Reactor

	mu    sync.Mutex
	snaps map[snapshotKey]*snapshot
}

// snapshotKey is what an initialisation may depend on and a call must
// match: the memory limit, and the guest paths of the mounts, in order
// (the Go runtime lists the preopened directories at init and keeps their
// descriptors and names, not their rights).
type snapshotKey struct {
	pages  uint32
	mounts string
}

func keyOf(p Policy) snapshotKey {
	b := make([]byte, 0, 64)
	for _, mt := range p.Mounts {
		b = append(strconv.AppendQuote(b, mt.GuestPath), ';')
	}
	return snapshotKey{pages: p.memoryPages(), mounts: string(b)}
}

// usePreinit makes m a fast-mode module when its bytes are one, so that
// what is compiled is the rewritten module. Its manifest, in a custom
// section, is kept by the rewrite.
//
// # Errors
//
// errInvalidModule for a fast-mode module that cannot be rewritten.
func (m *Module) usePreinit() error {
	rx, err := wasmcode.NewReactor(m.wasm)
	if errors.Is(err, wasmcode.ErrNotReactor) {
		return nil
	}
	if errors.Is(err, errInvalidModule) {
		return err // it says what is wrong with the module
	}
	if err != nil {
		return fmt.Errorf("%w: fast mode: %v", errInvalidModule, err)
	}
	m.pre = &preinit{rx: rx, snaps: map[snapshotKey]*snapshot{}}
	m.wasm = rx.Code
	return nil
}

// instantiate makes the instance of one Run or Call and runs it to its end.
// A command module runs its _start; a fast-mode module runs abi.CallExport
// in an instance restored from its snapshot for the policy (taking it
// first if there is none yet): a spare made before the call came when
// there is one (see spares), otherwise one made now. A call granted real
// randomness is the exception: it initialises its own instance, since the
// Go runtime seeds its generators (map order, math/rand) at init and a
// snapshot would give every call the same seeds.
func (m *Module) instantiate(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, cio callIO, p Policy) (api.Module, error) {
	if m.pre == nil {
		cfg := moduleConfig(p, cio).WithStartFunctions()
		mod, err := m.instantiateModule(ctx, rt, cm, cfg, nil, p.Mounts)
		if err != nil {
			return mod, err
		}
		return mod, m.start(ctx, mod)
	}
	if p.RealRandom {
		mod, err := m.initialise(ctx, rt, cm, moduleConfig(p, cio).WithStartFunctions(), p.Mounts)
		if err != nil {
			return mod, err
		}
		return mod, m.callExport(ctx, mod)
	}
	snap, err := m.pre.snapshotFor(ctx, m, rt, cm, p)
	if err != nil {
		return nil, err
	}
	var s *spare
	if !m.r.noSpares {
		key := spareKeyOf(p)
		s = snap.spares.take(key)
		// The next calls' spares are made once this call, and any other
		// of its key running with it, has run, so that making them does
		// not compete with the calls.
		defer func() {
			if snap.spares.done(key) {
				m.r.background(func() {
					defer m.r.using()()
					m.refillSpare(context.Background(), rt, cm, snap, p)
				})
			}
		}()
	}
	if s == nil {
		if s, err = m.makeSpare(ctx, rt, cm, snap, p); err != nil {
			return nil, err
		}
	}
	s.bind(cio)
	m.r.fds.preopens(s.mod, p.Mounts)
	err = m.callFunction(ctx, s.mod, s.call)
	// Closed before the refill runs, so that it may reuse the memory.
	s.mod.Close(context.Background())
	m.r.fds.forget(s.mod) // closed already by wazero's deadline, Close notifies no one
	return nil, err
}

// instantiateModule instantiates cm with cfg, in memory from a when given
// (the runtime's allocator otherwise), with the table of what WASI records
// of its descriptors, which goes when it is closed, holding the preopens
// of the read-only mounts among ms.
func (m *Module) instantiateModule(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, cfg wazero.ModuleConfig, a experimental.MemoryAllocator, ms []Mount) (api.Module, error) {
	var mod api.Module
	ctx = experimental.WithCloseNotifier(m.withAllocator(ctx, a), experimental.CloseNotifyFunc(func(context.Context, uint32) {
		m.r.fds.forget(mod)
	}))
	mod, err := rt.InstantiateModule(ctx, cm, cfg)
	if err == nil {
		m.r.fds.add(mod)
		m.r.fds.preopens(mod, ms)
	}
	return mod, err
}

// withAllocator puts the memory allocator of an instance in ctx: a's when
// given, the runtime's otherwise.
func (m *Module) withAllocator(ctx context.Context, a experimental.MemoryAllocator) context.Context {
	if a == nil && m.r.alloc != nil {
		a = m.r.alloc
	}
	return experimental.WithMemoryAllocator(ctx, a)
}

// restored instantiates the fast-mode module from snap (see
// snapshot.restore), returning the instance (to be closed by the caller
// whatever the error). timed is an instance cfg gives the real clock.
func (m *Module) restored(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, cfg wazero.ModuleConfig, snap *snapshot, timed bool) (api.Module, error) {
	mem := snap.memory(timed)
	mod, err := m.instantiateModule(ctx, rt, cm, cfg, mem.alloc(), nil)
	if err != nil {
		return mod, err
	}
	return mod, snap.restore(mod, mem)
}

// initialise instantiates the module with its data, and the mounts ms,
// and runs its initialisation, returning the instance (to be closed by
// the caller whatever the error).
func (m *Module) initialise(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, cfg wazero.ModuleConfig, ms []Mount) (api.Module, error) {
	mod, err := m.instantiateModule(ctx, rt, cm, cfg, nil, ms)
	if err != nil {
		return mod, err
	}
	data, err := m.dataRuns()
	if err != nil {
		return mod, err
	}
	// As at instantiation, data must fit in the memory's initial size.
	for _, d := range data {
		if !mod.Memory().Write(uint32(d.Off), d.B) {
			return mod, fmt.Errorf("%w: a data segment is outside its memory", errInvalidModule)
		}
	}
	if m.hasStart {
		if err := m.start(ctx, mod); err != nil {
			return mod, err
		}
	}
	return mod, m.guarded(ctx, mod, func() error {
		_, err := mod.ExportedFunction(abi.InitExport).Call(ctx)
		return err
	})
}

// callExport runs abi.CallExport; a non-zero result is an exit with that
// status, as if the module had called proc_exit.
func (m *Module) callExport(ctx context.Context, mod api.Module) error {
	return m.callFunction(ctx, mod, mod.ExportedFunction(abi.CallExport))
}

// callFunction is callExport with fn, mod's abi.CallExport looked up
// already (nil if mod has none).
func (m *Module) callFunction(ctx context.Context, mod api.Module, fn api.Function) error {
	if fn == nil {
		return fmt.Errorf("%w: no export %s", errInvalidModule, abi.CallExport)
	}
	var res []uint64
	err := m.guarded(ctx, mod, func() (err error) {
		res, err = fn.Call(ctx)
		return err
	})
	if err != nil {
		return err
	}
	if len(res) == 1 && uint32(res[0]) != 0 {
		return sys.NewExitError(uint32(res[0]))
	}
	return nil
}

// snapshotFor returns the snapshot for p's key, taking it if there is none.
// Initialisations of one module run one at a time; a failed one is not
// kept, so the next call tries again.
func (pre *preinit) snapshotFor(ctx context.Context, m *Module, rt wazero.Runtime, cm wazero.CompiledModule, p Policy) (*snapshot, error) {
	key := keyOf(p)
	pre.mu.Lock()
	defer pre.mu.Unlock()
	if s, ok := pre.snaps[key]; ok {
		return s, nil
	}
	s, err := m.takeSnapshot(ctx, rt, cm, p)
	if err != nil {
		return nil, err
	}
	pre.snaps[key] = s
	return s, nil
}

// takeSnapshot initialises one instance under p's limits with nothing of
// any call's: no arguments but argv[0], no environment, empty stdin, the
// deterministic clock and randomness, and in place of each mount an empty
// read-only directory at the same guest path. Its output is discarded.
// It then serves one warm-up call (see warmUpRequest) and is snapshotted
// after it, so that what a Go runtime does on its first call into an
// export and never again is done once here, not in every call. A module
// whose warm-up call fails is snapshotted as initialised instead.
//
// # Errors
//
// Those of an instance that fails: the initialisation's trap, exit or
// deadline, with the tail of what it wrote to stderr.
func (m *Module) takeSnapshot(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, p Policy) (*snapshot, error) {
	if err := checkCallExport(cm); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(p.Timeout, DefaultTimeout))
	defer cancel()
	snap, err := m.snapshotInitialised(ctx, rt, cm, p, true)
	if errors.Is(err, errWarmUp) {
		snap, err = m.snapshotInitialised(ctx, rt, cm, p, false)
	}
	if err != nil {
		return nil, err
	}
	snap.image.prefault(m.learnPages(ctx, rt, cm, snapshotConfig(p), snap))
	return snap, nil
}

// errWarmUp is a warm-up call that failed.
var errWarmUp = errors.New("warm-up call failed")

// snapshotInitialised initialises one instance with snapshotConfig and,
// when warm, serves the warm-up call in it, then snapshots it.
func (m *Module) snapshotInitialised(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, p Policy, warm bool) (*snapshot, error) {
	stderr := &capped{limit: orDefault(p.StderrLimit, defaultStderrLimit)}
	stdin := &boundReader{bytes.NewReader(nil)}
	var readings int64
	cfg := detClock(snapshotConfig(p).WithStdin(stdin).WithStderr(stderr), 0, &readings)
	// Its mounts stand in for those of any call of its key, read-only or
	// not: the calls' spares record which are (see descriptors.preopens).
	mod, err := m.initialise(ctx, rt, cm, cfg, nil)
	if mod != nil {
		defer mod.Close(context.Background())
	}
	if err != nil {
		if _, exitErr := exitOf(ctx, Exit{}, err, p); exitErr != nil {
			err = exitErr
		}
		return nil, fmt.Errorf("initialise module: %w: %s", err, tail(stderr.buf.Bytes()))
	}
	if warm {
		stdin.Reader = bytes.NewReader(warmUpRequest)
		if err := m.callExport(ctx, mod); err != nil {
			return nil, fmt.Errorf("%w: %v", errWarmUp, err)
		}
	}
	return newSnapshot(mod, m.pre.rx.Globals, readings)
}

// snapshotConfig configures the instances a snapshot is taken of, and
// learnt from: see takeSnapshot.
func snapshotConfig(p Policy) wazero.ModuleConfig {
	fsc := wazero.NewFSConfig()
	for _, mt := range p.Mounts {
		fsc = fsc.WithFSMount(emptyDir{}, mt.GuestPath)
	}
	return wazero.NewModuleConfig().WithName("").WithArgs("tool").
		WithStdin(bytes.NewReader(nil)).WithStdout(&capped{}).WithStderr(&capped{}).
		WithFSConfig(fsc).WithStartFunctions()
}

// warmUpRequest is the request of the calls a snapshot is warmed up and
// learnt from: it names no tool, so the guest answers it at once, having
// done what every call does (read and decode a request, encode and write
// a response) and nothing of any tool's.
var warmUpRequest = func() []byte {
	b, err := abi.Marshal(abi.Request{ABI: abi.Version, Input: "{}", Workspace: abi.WorkspaceDir})
	if err != nil {
		panic(err)
	}
	return b
}()

// learnPages runs one call from snap, with snap's own configuration (no
// mounts' contents, no environment, the deterministic clock) and the
// warm-up request, and returns the pages of the snapshot it read and
// those it wrote. The runtime's entry, stack and allocator state and the
// codecs are what every call touches, so later calls have those pages
// mapped or copied when their memory is mapped instead of faulting them in
// one at a time. What is learnt comes from this call only, never from a
// tool call. Nil if it fails.
func (m *Module) learnPages(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, cfg wazero.ModuleConfig, snap *snapshot) (read, written []pageRange) {
	cfg = detClock(cfg.WithStdin(bytes.NewReader(warmUpRequest)), snap.clockReadings, nil)
	mod, err := m.restored(ctx, rt, cm, cfg, snap, false)
	if mod != nil {
		defer mod.Close(context.Background())
	}
	if err != nil || m.callExport(ctx, mod) != nil {
		return nil, nil
	}
	b, _ := mod.Memory().Read(0, mod.Memory().Size())
	return snap.usedPages(b)
}

// checkEntries refuses a module whose _start or abi.InitExport, where it
// exports one, is not a function of type () -> (), as WASI has them:
// wazero would refuse to call it only when it runs, at every call, in
// words that read as a trap. A command module (not in the fast mode) must
// export _start: without it a run would run nothing and end as a success.
// code is the module's code, whose export section names the kind of an
// export that is not a function.
func checkEntries(cm wazero.CompiledModule, code []byte, command bool) error {
	for _, name := range []string{"_start", abi.InitExport} {
		fn, ok := cm.ExportedFunctions()[name]
		if ok && (len(fn.ParamTypes()) != 0 || len(fn.ResultTypes()) != 0) {
			return fmt.Errorf("%w: export %s must be a function of type () -> (), not %s", errInvalidModule, name, signature(fn))
		}
	}
	if _, ok := cm.ExportedFunctions()["_start"]; ok || !command {
		return nil
	}
	kinds := map[string]byte{}
	if secs, err := wasmcode.Sections(code); err == nil {
		kinds, _ = wasmcode.ExportKinds(secs[wasmcode.SecExport])
	}
	if kind, ok := kinds["_start"]; ok {
		return fmt.Errorf("%w: export _start must be a function of type () -> (), not %s", errInvalidModule, exportKind(kind))
	}
	return fmt.Errorf("%w: the module exports no _start, so a run would run nothing: a tool module exports _start, a function of type () -> (), or, in the fast mode, %s and %s", errInvalidModule, abi.InitExport, abi.CallExport)
}

// exportKind names an export's kind as the export section gives it.
func exportKind(kind byte) string {
	switch kind {
	case 1:
		return "a table"
	case 2:
		return "a memory"
	case 3:
		return "a global"
	case 4:
		return "a tag"
	}
	return fmt.Sprintf("an export of kind %d", kind)
}

// checkCallExport refuses a module whose abi.CallExport is not () -> i32.
func checkCallExport(cm wazero.CompiledModule) error {
	fn, ok := cm.ExportedFunctions()[abi.CallExport]
	if !ok || len(fn.ParamTypes()) != 0 || len(fn.ResultTypes()) != 1 || fn.ResultTypes()[0] != api.ValueTypeI32 {
		return fmt.Errorf("%w: export %s must be a function of type () -> i32", errInvalidModule, abi.CallExport)
	}
	return nil
}

// detClock sets the deterministic clock of a fast-mode instance: like
// wazero's own (a fixed epoch, 1 ms more at every reading, the wall and
// monotonic clocks advancing together), but starting after start readings.
// A call starts where the initialisation stopped, so the clock never runs
// backwards between what the runtime recorded at init and what a call
// reads, and every call reads the same times. When last is set it is kept
// at the number of readings taken (the instance runs one thread at a time).
func detClock(cfg wazero.ModuleConfig, start int64, last *int64) wazero.ModuleConfig {
	n := start
	next := func() int64 {
		n++
		if last != nil {
			*last = n
		}
		return n * int64(time.Millisecond)
	}
	return cfg.
		WithWalltime(func() (int64, int32) {
			t := fakeEpoch + next()
			return t / 1e9, int32(t % 1e9)
		}, sys.ClockResolution(time.Millisecond)).
		WithNanotime(next, sys.ClockResolution(time.Millisecond))
}

// fakeEpoch is wazero's: 2022-01-01T00:00:00Z.
const fakeEpoch = 1640995200 * int64(time.Second)

// emptyDir is an empty directory: what a snapshot's initialisation sees
// in place of each mount.
type emptyDir struct{}

func (emptyDir) Open(name string) (fs.File, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return emptyDirFile{}, nil
}

type emptyDirFile struct{}

func (emptyDirFile) Stat() (fs.FileInfo, error) { return emptyDirInfo{}, nil }
func (emptyDirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: errors.New("is a directory")}
}
func (emptyDirFile) Close() error                       { return nil }
func (emptyDirFile) ReadDir(int) ([]fs.DirEntry, error) { return nil, nil }
func (emptyDirInfo) Name() string                       { return "." }
func (emptyDirInfo) Size() int64                        { return 0 }
func (emptyDirInfo) Mode() fs.FileMode                  { return fs.ModeDir | 0o555 }
func (emptyDirInfo) ModTime() time.Time                 { return time.Unix(0, 0) }
func (emptyDirInfo) IsDir() bool                        { return true }
func (emptyDirInfo) Sys() any                           { return nil }

type emptyDirInfo struct{}
