package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"golang.org/x/sync/singleflight"

	"github.com/cairnrun/cairn/internal/fileowner"
	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// Config configures a Runtime. The zero value compiles in memory only.
type Config struct {
	// CacheDir holds compiled modules between processes. It is created
	// private to the user; one that others can write is refused, since
	// compiled code in it runs in this process.
	CacheDir string
	// CacheMax bounds the compiled code the cache on disk keeps: once a
	// compile writes a file into it, and when a Runtime that loaded
	// modules from it closes, if its files take more bytes than this,
	// those used least recently are removed, but those this process
	// loaded (see TrimCache). 0 is DefaultCacheMax; negative, no bound.
	CacheMax int64
	// Limits of what compiling a module may cost, checked before it is
	// decoded: its size in bytes, its number of functions, the code of
	// its largest function in bytes; and the time compiling may take.
	// Zero means the Default of each.
	MaxModuleSize, MaxFunctions, MaxFunctionSize int
	CompileTimeout                               time.Duration
	// Engine runs modules compiled or interpreted; "" is EngineAuto.
	Engine Engine
}

// Runtime compiles modules and runs calls. wazero fixes a memory limit per
// runtime, so a Runtime keeps one wazero runtime per distinct limit, all
// sharing one compilation cache.
type Runtime struct {
	cache  wazero.CompilationCache
	limits compileLimits
	// engine is Config.Engine, and cacheDir Config.CacheDir, where
	// compiled modules are marked (see cached); memoryLimit reads the
	// process's memory limit (processMemoryLimit; tests replace it).
	engine      Engine
	cacheDir    string
	disk        diskCache // what this process loaded from cacheDir
	memoryLimit func() (int64, bool)
	apartMu     sync.Mutex   // one compilation apart at a time
	inFlight    atomic.Int32 // compilations under way, see Compiling
	apartRuns   atomic.Int32 // processes compileApart started (tests count them)
	recompiles  atomic.Int32 // compiles done again after one failed (tests count them)
	ownLoads    atomic.Int32 // modules loaded from a file compiled apart into ownDir (tests count them)
	// ownDir is the Runtime's own directory among the temporary files,
	// and ownCache wazero's compilation cache in it, made at their first
	// use (see useOwn); guarded by mu.
	ownDir   string
	ownCache wazero.CompilationCache
	ownLock  *os.File                     // ownDir, open and locked (see lockDir)
	alloc    experimental.MemoryAllocator // nil: wazero's own
	fds      *descriptors                 // what WASI records of instances' descriptors
	// freeHeap collects garbage and returns the heap's free pages to the
	// system (debug.FreeOSMemory; tests count it), around loading a big
	// module from the compile cache (see bigModule).
	freeHeap func()
	// noStopChecks leaves modules as they are, stopped by wazero's
	// close-on-done: for measuring what the stop checks save.
	noStopChecks bool
	// noSpares makes every instance at its call (see spares): for
	// measuring what spares save.
	noSpares bool

	mu sync.Mutex
	// compiling holds one compilation per module (and memory limit) in
	// flight; concurrent callers share it.
	compiling singleflight.Group
	runtimes  map[runtimeKey]wazero.Runtime
	modules   map[string]*Module // by digest

	// trimming is held for reading by calls and the work done for later
	// calls, and for writing by Trim while it lets go of what they use.
	trimming sync.RWMutex
	// lastUse is when a call, or work for later calls, last let go of
	// what it used (UnixNano); TrimIdle trims only after a quiet spell.
	lastUse atomic.Int64

	closed bool
	bg     sync.WaitGroup // work done for later calls, see background
	// held, when set, collects the work background would start, for a
	// benchmark to run between calls on its own goroutine: for measuring
	// what that work costs a call when it runs on another core.
	held []func()
}

// NewRuntime makes a Runtime.
//
// # Errors
//
// A cache directory that cannot be made private to the user.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	r := &Runtime{runtimes: map[runtimeKey]wazero.Runtime{}, modules: map[string]*Module{}, alloc: newMemoryAllocator(), fds: &descriptors{},
		freeHeap: debug.FreeOSMemory, limits: cfg.limits(), cacheDir: cfg.CacheDir, memoryLimit: processMemoryLimit}
	engine, err := ParseEngine(string(cfg.Engine))
	if err != nil {
		return nil, err
	}
	r.engine = engine
	r.disk.max = cfg.CacheMax
	if r.disk.max == 0 {
		r.disk.max = DefaultCacheMax
	}
	if cfg.CacheDir == "" {
		r.cache = wazero.NewCompilationCache()
		return r, nil
	}
	if err := privateDir(cfg.CacheDir); err != nil {
		return nil, fmt.Errorf("compile cache: %w", err)
	}
	clearCacheDir(cfg.CacheDir)
	if err := os.Mkdir(filepath.Join(cfg.CacheDir, versionDir()), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		// wazero makes it below, and says only that it could not.
		return nil, fmt.Errorf("compile cache %s cannot be written (%v): make it writable, or use a compile cache that can be written", cfg.CacheDir, unwrapPath(err))
	}
	cache, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("compile cache %s: %w", cfg.CacheDir, err)
	}
	r.cache = cache
	return r, nil
}

// privateDir makes dir if needed and refuses it if anyone but its owner can
// write it or it belongs to another user. A dir that is a link is named
// with where it leads, and what to do is said of the link: a chmod of a
// shared directory it leads to would take it from everyone else.
func privateDir(dir string) error {
	target, err := os.Readlink(dir)
	link := err == nil
	if err := os.MkdirAll(dir, 0o700); err != nil {
		if link {
			return fmt.Errorf("%s is a link to %s, which is no directory: make the directory it links to, or remove the link", dir, target)
		}
		return fmt.Errorf("%s cannot be made (%v): use a compile cache that can be written", dir, unwrapPath(err))
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	switch uid, ok := fileowner.UID(fi); {
	case fi.Mode().Perm()&0o022 != 0 && link:
		return fmt.Errorf("%s is a link to %s, which can be written by others (mode %v): point the link at a directory of your own", dir, target, fi.Mode().Perm())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s can be written by others (mode %v); make it private with chmod 700", dir, fi.Mode().Perm())
	case ok && uid != os.Getuid() && link:
		return fmt.Errorf("%s is a link to %s, which belongs to another user (uid %d): point the link at a directory of your own", dir, target, uid)
	case ok && uid != os.Getuid():
		return fmt.Errorf("%s belongs to another user (uid %d)", dir, uid)
	}
	return nil
}

// Close releases every compiled module and runtime, once the work begun
// for later calls has ended.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.bg.Wait()
	r.boundAtClose()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rt := range r.runtimes {
		rt.Close(ctx)
	}
	r.runtimes = map[runtimeKey]wazero.Runtime{}
	r.closeOwnLocked(ctx)
	return r.cache.Close(ctx)
}

// background runs fn, work for later calls, in a goroutine of its own,
// and reports whether it did: not once the Runtime is closing.
func (r *Runtime) background(fn func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if r.held != nil {
		r.held = append(r.held, fn)
		return true
	}
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		fn()
	}()
	return true
}

// Loading is a module that Load is compiling.
type Loading struct {
	r    *Runtime
	done chan struct{}
	mod  *Module
	err  error
	// limit is the memory limit of the first policy prepared, in pages:
	// the module is checked at it (see probe.go) if it comes in time.
	limit atomic.Uint32
}

// Load starts compiling wasm, as Compile does, and returns at once, so
// that the caller can do other work meanwhile (an agent asks its model
// while its tools compile). Close waits for it.
func (r *Runtime) Load(ctx context.Context, wasm []byte) *Loading {
	return r.LoadFrom(ctx, func() ([]byte, error) { return wasm, nil })
}

// LoadFrom is Load of the bytes that read returns, called in the
// background: a module read from a file is read there too, while the
// caller goes on. Wait returns read's error, when it fails.
func (r *Runtime) LoadFrom(ctx context.Context, read func() ([]byte, error)) *Loading {
	l := &Loading{r: r, done: make(chan struct{})}
	ctx = context.WithoutCancel(ctx)
	if !r.background(func() {
		defer close(l.done)
		wasm, err := read()
		if err != nil {
			l.err = err
			return
		}
		l.mod, l.err = r.compileAt(ctx, wasm, l.limit.Load)
	}) {
		l.err = errors.New("the runtime is closed")
		close(l.done)
	}
	return l
}

// Wait returns the module, or Compile's error, once it has compiled. It
// returns ctx's error if ctx ends first; the compilation goes on.
func (l *Loading) Wait(ctx context.Context) (*Module, error) {
	select {
	case <-l.done:
		return l.mod, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Prepare readies the module for calls under p once it has compiled, in
// the background: for a fast-mode module it takes the snapshot for p and
// makes a spare instance, so that the first such call finds both. What
// fails here is left for the call to meet and report.
func (l *Loading) Prepare(p Policy) {
	l.limit.CompareAndSwap(0, p.memoryPages())
	l.r.background(func() {
		<-l.done
		if l.err == nil {
			l.mod.prepare(context.Background(), p)
		}
	})
}

// Done reports whether the module has compiled, or failed to.
func (l *Loading) Done() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// runtimeKey is what a wazero runtime fixes for its modules: the memory
// limit in pages, whether an instance is closed when the context of a
// call into it ends (for modules without stop checks), and whether it
// interprets them.
type runtimeKey struct {
	pages       uint32
	closeOnDone bool
	interpret   bool
	own         bool // for modules loaded from the Runtime's own directory (see useOwn)
}

// runtime returns the wazero runtime for k, making it.
func (r *Runtime) runtime(ctx context.Context, k runtimeKey) (wazero.Runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rt, ok := r.runtimes[k]; ok {
		return rt, nil
	}
	cfg := wazero.NewRuntimeConfigCompiler()
	if k.interpret {
		cfg = wazero.NewRuntimeConfigInterpreter()
	}
	cache := r.cache
	if k.own {
		own, err := r.ownCacheLocked()
		if err != nil {
			return nil, err
		}
		cache = own
	}
	cfg = cfg.WithCompilationCache(cache).
		WithCloseOnContextDone(k.closeOnDone).
		WithMemoryLimitPages(k.pages)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if err := instantiateWASI(ctx, rt, r.fds); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	if err := instantiateNet(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	r.runtimes[k] = rt
	return rt, nil
}

// Compile checks and compiles a module. The same bytes compile once.
//
// # Errors
//
// An error for bytes wazero does not accept; ErrCompileLimit for a module
// past a compile limit of Config (or ctx's end while it compiles); an
// error naming the import for a module importing anything but the
// functions of WASI preview 1. Which of those a call may use is the
// policy's (see Policy.Imports) and is checked by Run and Call.
func (r *Runtime) Compile(ctx context.Context, wasm []byte) (*Module, error) {
	return r.compileAt(ctx, wasm, nil)
}

// compileAt is Compile checking the module at the memory limit probeAt
// returns when it comes to it, in pages (nil or 0: the default).
func (r *Runtime) compileAt(ctx context.Context, wasm []byte, probeAt func() uint32) (*Module, error) {
	digest := digestOf(wasm)
	r.mu.Lock()
	m, ok := r.modules[digest]
	r.mu.Unlock()
	if ok {
		return m, nil
	}
	// Agents that start at once with the same tools compile them once:
	// the others wait for it instead of compiling too.
	v, err, _ := r.compiling.Do(digest, func() (any, error) { return r.compile(ctx, digest, wasm, probeAt) })
	if err != nil {
		return nil, err
	}
	return v.(*Module), nil
}

// limitOf is the memory limit probeAt returns, 0 for none.
func limitOf(probeAt func() uint32) uint32 {
	if probeAt == nil {
		return 0
	}
	return probeAt()
}

func (r *Runtime) compile(ctx context.Context, digest string, wasm []byte, probeAt func() uint32) (*Module, error) {
	r.inFlight.Add(1)
	defer r.inFlight.Add(-1)
	r.mu.Lock()
	m, ok := r.modules[digest]
	r.mu.Unlock()
	if ok {
		return m, nil
	}
	if err := r.limits.check(wasm); err != nil {
		return nil, err
	}
	if err := checkImportKinds(wasm); err != nil {
		return nil, err
	}
	wasm, err := boundTables(wasm)
	if err != nil {
		return nil, err
	}
	m = &Module{r: r, digest: digest, wasm: wasm, compiled: map[uint32]wazero.CompiledModule{}, interpret: r.engine == EngineInterpreter,
		born: time.Now()}
	// A module that does not read is refused when it compiles, below.
	m.minPages, _ = wasmcode.MemoryMin(wasm)
	if !r.noStopChecks {
		m.useStopChecks()
	}
	if err := m.usePreinit(); err != nil {
		return nil, err
	}
	if r.apart(digest, m.entryOf(m.wasm)) {
		if err := r.compileApart(ctx, m, m.wasm, false); err != nil {
			return nil, err
		}
	}
	pages := Policy{}.memoryPages()
	if at := limitOf(probeAt); at != 0 && at != pages {
		// A module the prepared policy's limit cannot hold is checked at
		// the default, as Compile does: that policy's calls report it.
		_, err := m.compiledFor(ctx, at)
		if errors.Is(err, ErrCompileLimit) {
			return nil, err // compiling again would take as long
		}
		if err == nil {
			pages = at
		}
	}
	if _, err := m.compiledFor(ctx, pages); err != nil {
		return nil, err
	}
	m.probeMade(pages)
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.modules[digest]; ok {
		return prev, nil
	}
	r.modules[digest] = m
	return m, nil
}
