package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	mathrand "math/rand"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox/internal/guestfs"
	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// Module is a compiled module. Every Run or Call instantiates it afresh.
type Module struct {
	r         *Runtime
	digest    string
	wasm      []byte
	compiled  map[uint32]wazero.CompiledModule // by memory limit; guarded by r.mu
	probe     uint32                           // limit of the unused probe (probe.go); guarded by r.mu
	src       source                           // where wasm is while put away (source.go)
	pre       *preinit                         // the fast mode; nil for a command module
	stops     bool                             // wasm has stop checks (see wasmcode.WithStopChecks)
	hasStart  bool                             // and its start function is exported as wasmcode.StartExport
	interpret bool                             // run by wazero's interpreter (see Engine)
	imports   importsCache                     // of the compiled module last checked
	minPages  uint64                           // the size its memory starts at
	born      time.Time                        // when compiling it began
	entry     string                           // its file in the compile cache (entryName); guarded by r.mu
	// unwritten: compiled apart, its file could not be written (a full
	// disk), so this Runtime loads it from its own directory from then
	// on (see useOwn), or compiles it in process, not apart into the
	// cache again to the same end; guarded by r.mu
	unwritten bool
	// own: loaded from a file compiled apart into the Runtime's own
	// directory, in runtimes of their own (see useOwn); guarded by r.mu
	own bool
}

// Digest is "sha256:" and the hex of the module's bytes.
func (m *Module) Digest() string { return m.digest }

// engine is the engine the module runs on: EngineCompiler or
// EngineInterpreter.
func (m *Module) engine() Engine {
	if m.interpret {
		return EngineInterpreter
	}
	return EngineCompiler
}

// manifest reads the module's manifest from its custom section. It never
// runs the module.
func (m *Module) manifest() (abi.Manifest, error) {
	code, err := m.code()
	if err != nil {
		return abi.Manifest{}, err
	}
	return abi.ReadManifest(code)
}

// compiledFor is the module compiled to run under a memory limit of
// pages. A module whose memory starts larger than the limit is
// ErrMemoryLimit, saying both sizes (wazero's refusal names neither in
// MiB nor as a limit of the call's).
func (m *Module) compiledFor(ctx context.Context, pages uint32) (wazero.CompiledModule, error) {
	if m.minPages > uint64(pages) {
		return nil, fmt.Errorf("%w: the module's memory starts at %s, more than the limit of %s", ErrMemoryLimit, pageSize(m.minPages), pageSize(uint64(pages)))
	}
	rt, err := m.runtime(ctx, pages)
	if err != nil {
		return nil, err
	}
	m.r.mu.Lock()
	cm, ok := m.compiled[pages]
	m.usedLocked(pages)
	m.r.mu.Unlock()
	if ok {
		return cm, nil
	}
	v, err, _ := m.r.compiling.Do(fmt.Sprintf("%s/%d", m.digest, pages), func() (any, error) {
		return m.compileFor(ctx, rt, pages)
	})
	if err != nil {
		return nil, err
	}
	return v.(wazero.CompiledModule), nil
}

// runtime returns the wazero runtime the module runs in at a memory
// limit: one that closes an instance when its context ends for a module
// without stop checks.
func (m *Module) runtime(ctx context.Context, pages uint32) (wazero.Runtime, error) {
	m.r.mu.Lock()
	own := m.own
	m.r.mu.Unlock()
	return m.r.runtime(ctx, runtimeKey{pages: pages, closeOnDone: !m.stops, interpret: m.interpret, own: own})
}

// useStopChecks rewrites the module with stop checks when it can (see
// wasmcode.WithStopChecks); one it cannot rewrite is left as it is, to be stopped
// by its runtime instead.
func (m *Module) useStopChecks() {
	sc, err := wasmcode.WithStopChecks(m.wasm)
	if err != nil {
		return
	}
	m.wasm, m.stops, m.hasStart = sc.Code, true, sc.Start
}

// bigModule is the size of code past which loading a module from the
// compile cache returns the Go heap's free pages to the system
// (Runtime.freeHeap) before wazero loads it and again after. Rewriting a
// Go module of megabytes leaves about as many of garbage, and wazero's
// decoding and validating it as many again; the heap would otherwise hold
// them, resident, while wazero reads the module's machine code into
// memory beside them (20 MiB for the example's textstats) and for the
// rest of a short run. A smaller module leaves too little to be worth a
// collection. A module the cache lacks is compiled without them: the
// compile's own garbage dwarfs the rest, and returning pages the compile
// is about to take again would only slow a first run down.
const bigModule = 1 << 20

// compileFor compiles the module for one memory limit and keeps it.
func (m *Module) compileFor(ctx context.Context, rt wazero.Runtime, pages uint32) (wazero.CompiledModule, error) {
	m.r.mu.Lock()
	cm, ok := m.compiled[pages]
	m.r.mu.Unlock()
	if ok {
		return cm, nil
	}
	code, err := m.code()
	if err != nil {
		return nil, err
	}
	if !m.interpret {
		m.r.restoreCacheDir()
	}
	if !m.interpret && m.r.apart(m.digest, m.entryOf(code)) {
		// The cache lost the module since it compiled (see TrimCache):
		// compiled again as at first.
		if err := m.r.compileApart(ctx, m, code, false); err != nil {
			return nil, err
		}
	}
	cctx, cancel := m.r.limits.compileContext(ctx)
	defer cancel()
	start := time.Now()
	big := len(code) >= bigModule && !m.interpret && m.r.cached(m.digest)
	if big {
		m.r.freeHeap()
	}
	// Looked at only when the module's file fails to load.
	repairApart := func() (bool, error) {
		if m.interpret || !m.r.compilesApart() {
			return false, nil
		}
		if err := m.r.compileApart(cctx, m, code, true); err != nil {
			return true, err
		}
		if m.isOwn() {
			return true, errLoadOwn
		}
		return true, nil
	}
	own := m.isOwn()
	if !own {
		cm, err = m.r.compileModule(cctx, rt, code, runtimeKey{pages: pages, closeOnDone: !m.stops, interpret: m.interpret}, repairApart)
		own = errors.Is(err, errLoadOwn)
	}
	if own {
		if rt, err = m.runtime(ctx, pages); err == nil {
			cm, err = m.r.loadOwn(cctx, rt, m, code)
		}
	}
	if big {
		m.r.freeHeap()
	}
	if err != nil {
		if cctx.Err() != nil {
			return nil, fmt.Errorf("%w: compiling it did not end within %s or before its caller gave up (Config.CompileTimeout)", ErrCompileLimit, m.r.limits.timeout)
		}
		return nil, err
	}
	if err := checkImports(cm, hostFunctions(rt)); err != nil {
		cm.Close(ctx)
		return nil, err
	}
	if err := checkEntries(cm, code, m.pre == nil); err != nil {
		cm.Close(ctx)
		return nil, err
	}
	if !m.interpret && !own {
		m.r.loaded(m, code, !m.stops, start)
	}
	m.r.mu.Lock()
	if m.own && !own {
		// Another compile had the module loaded from the Runtime's own
		// directory meanwhile: its instances are made in runtimes of it.
		m.r.mu.Unlock()
		cm.Close(ctx)
		return m.compileFor(ctx, rt, pages)
	}
	defer m.r.mu.Unlock()
	if prev, ok := m.compiled[pages]; ok {
		cm.Close(ctx)
		return prev, nil
	}
	m.compiled[pages] = cm
	defer m.dropProbeLocked(pages)()
	return cm, nil
}

// entryOf returns what gives the module's file in the compile cache, of
// code, its code (see entryName).
func (m *Module) entryOf(code []byte) func() string {
	return func() string {
		m.r.mu.Lock()
		entry := m.entry
		m.r.mu.Unlock()
		if entry != "" {
			return entry
		}
		return entryName(code, !m.stops)
	}
}

// Exit is how a Run ended.
type Exit struct {
	Code                             uint32
	StdoutTruncated, StderrTruncated bool
	Duration                         time.Duration
}

// Run runs the module as a WASI command under the policy, with stdin,
// stdout and stderr passed through (capped). A non-zero exit is not an
// error: it is in Exit.Code.
//
// # Errors
//
// ErrDeadline when the policy's timeout passes, an error saying so when
// the module traps, and errors setting up its mounts.
func (m *Module) Run(ctx context.Context, p Policy, stdin io.Reader, stdout, stderr io.Writer) (Exit, error) {
	out := &capped{w: stdout, limit: orDefault(p.StdoutLimit, defaultStdoutLimit)}
	errOut := &capped{w: stderr, limit: orDefault(p.StderrLimit, defaultStderrLimit)}
	ex, err := m.run(ctx, p, stdin, out, errOut)
	return ex, err
}

// run instantiates the module once and runs it to its end.
func (m *Module) run(ctx context.Context, p Policy, stdin io.Reader, stdout, stderr *capped) (Exit, error) {
	start := time.Now()
	defer m.r.using()()
	cm, err := m.compiledFor(ctx, p.memoryPages())
	if err != nil {
		return Exit{}, err
	}
	if err := m.checkGranted(cm, p); err != nil {
		return Exit{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(p.Timeout, DefaultTimeout))
	defer cancel()
	stdout.stop, stderr.stop = ctx.Done(), ctx.Done()
	// Its mounts tell its WASI functions what wazero cannot name, and
	// those tell them which directory a path is relative to.
	ctx = guestfs.WithCall(ctx)
	fsys, closeFS, err := mounts(ctx, p.Mounts, guestfs.NewBudget(p.MaxOpenFiles), p.staging())
	if err != nil {
		return Exit{}, err
	}
	defer closeFS()
	ctx = withNet(ctx, p.Net)
	rt, err := m.runtime(ctx, p.memoryPages())
	if err != nil {
		return Exit{}, err
	}
	cio := callIO{
		stdin:  stdinFor(ctx, stdin, orDefault(p.StdinLimit, defaultStdinLimit)),
		stdout: stdout, stderr: stderr, mounts: fsys, sleep: &sleeper{stop: ctx.Done()},
	}
	mod, err := m.instantiate(ctx, rt, cm, cio, p)
	if mod != nil {
		mod.Close(context.Background())
		m.r.fds.forget(mod) // closed already by wazero's deadline, Close notifies no one
	}
	ex := Exit{StdoutTruncated: stdout.truncated, StderrTruncated: stderr.truncated, Duration: time.Since(start)}
	if err == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The guest ended on its own after its deadline, typically because
		// a stdin read was given up on at the deadline: it was cut short.
		return ex, fmt.Errorf("%w: stopped after %s", ErrDeadline, orDefault(p.Timeout, DefaultTimeout))
	}
	return exitOf(ctx, ex, err, p)
}

// exitOf reads how an instance ended, in a call whose context is ctx. The
// statuses wazero (and guarded) give an instance stopped at its context's
// end mean a stop only once ctx is done: before, they are a status of the
// guest's own, which proc_exit may pass as any other.
func exitOf(ctx context.Context, ex Exit, err error, p Policy) (Exit, error) {
	if err == nil {
		return ex, nil
	}
	var exitErr *sys.ExitError
	if !errors.As(err, &exitErr) {
		return ex, fmt.Errorf("%w: %s", errTrap, trapText(err))
	}
	switch code := exitErr.ExitCode(); {
	case code == sys.ExitCodeDeadlineExceeded && ctx.Err() != nil:
		return ex, fmt.Errorf("%w: stopped after %s", ErrDeadline, orDefault(p.Timeout, DefaultTimeout))
	case code == sys.ExitCodeContextCanceled && ctx.Err() != nil:
		return ex, context.Canceled
	}
	ex.Code = exitErr.ExitCode()
	return ex, nil
}

// trapText is a trap's message and its wasm stack trace, without the Go
// stack trace wazero adds when a host function panicked: that names the
// host's own files and addresses, which are no business of the guest's
// caller (the model, the journal) and differ from run to run.
func trapText(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "\nGo runtime stack trace:"); i >= 0 {
		msg = strings.TrimRight(msg[:i], "\n")
	}
	return msg
}

// callIO is what one call reads, writes and mounts, in the order of its
// policy's mounts.
type callIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	mounts         []experimentalsys.FS
	sleep          *sleeper // a real clock's sleep
}

// moduleConfig configures an instance for p, reading and writing cio.
func moduleConfig(p Policy, cio callIO) wazero.ModuleConfig {
	fsc := wazero.NewFSConfig()
	for i, mt := range p.Mounts {
		fsc = fsc.(sysfs.FSConfig).WithSysFSMount(cio.mounts[i], mt.GuestPath)
	}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs(append([]string{"tool"}, p.Args...)...).
		WithStdin(cio.stdin).WithStdout(cio.stdout).WithStderr(cio.stderr).
		WithFSConfig(fsc)
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		cfg = cfg.WithEnv(k, p.Env[k]) // in one order, so that a call sees the same environment every time
	}
	if p.RealClock {
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithNanosleep(cio.sleep.sleep)
	}
	var random io.Reader = &detRandom{}
	if p.RealRandom {
		random = rand.Reader
	}
	return cfg.WithRandSource(stoppingRandom{r: random, stop: cio.sleep})
}

// maxRandomRead is the most stoppingRandom reads at once.
const maxRandomRead = 1 << 20

// errStopped is a read of randomness for a call that must stop.
var errStopped = errors.New("the call must stop")

// stoppingRandom is the randomness an instance's random_get reads: r, at
// most maxRandomRead bytes a read, and nothing once the call must stop
// (stop's channel closed), which makes random_get fail (EIO) and the
// guest's next stop check end the call. wazero's random_get fills the
// guest's buffer, which may be all of its memory, in one read, in the
// host, where no stop check runs. Reading r in pieces gives the same bytes
// as reading it at once.
type stoppingRandom struct {
	r    io.Reader
	stop *sleeper
}

func (s stoppingRandom) Read(p []byte) (int, error) {
	if s.stop.stopped() {
		return 0, errStopped
	}
	return s.r.Read(p[:min(len(p), maxRandomRead)])
}

// detRandom is the randomness of an instance not granted the real one:
// wazero's own deterministic source (math/rand seeded with 42), the same
// bytes in every instance, but made at the first read. Seeding it takes
// longer than the rest of an instance's system context, and most calls
// never read it.
type detRandom struct{ r *mathrand.Rand }

func (d *detRandom) Read(p []byte) (int, error) {
	if d.r == nil {
		d.r = mathrand.New(mathrand.NewSource(42))
	}
	return d.r.Read(p)
}

// mounts opens the filesystem of each mount for a call whose context is
// ctx: a guestfs.Dir or an overlay's view.
func mounts(ctx context.Context, ms []Mount, files *guestfs.Budget, limit guestfs.StagingLimit) ([]experimentalsys.FS, func(), error) {
	var fsys []experimentalsys.FS
	var closers []func() error
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, mt := range ms {
		f, closeFS, err := mt.open(ctx, files, limit)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		closers = append(closers, closeFS)
		fsys = append(fsys, f)
	}
	return fsys, closeAll, nil
}

// CallResult is what one tool call returned.
type CallResult struct {
	Response        abi.Response
	Stderr          []byte
	StderrTruncated bool
	Duration        time.Duration
}

// Call runs one tool call: the request goes to stdin, one response is
// read from stdout.
//
// # Errors
//
// Those of Run; an error saying so, with the status and the end of the
// module's log, for a non-zero exit, for a module out of memory, and when
// stdout is not one valid response; ErrRequestTooLarge (before running anything) when the
// request is past the policy's StdinLimit or abi.MaxMessageSize,
// overlay.ErrStagingLimit when an overlay it mounts refused it a
// change for the policy's staging limits (whatever the module answered).
func (m *Module) Call(ctx context.Context, p Policy, req abi.Request) (CallResult, error) {
	in, err := abi.Marshal(req)
	if err != nil {
		return CallResult{}, fmt.Errorf("encode request: %w", err)
	}
	if limit := min(orDefault(p.StdinLimit, defaultStdinLimit), abi.MaxMessageSize); int64(len(in)) > limit {
		return CallResult{}, fmt.Errorf("%w: the call's arguments make a request of %d bytes, and the tool may read %d; pass less, or a path to a file",
			ErrRequestTooLarge, len(in), limit)
	}
	out := &capped{limit: orDefault(p.StdoutLimit, defaultStdoutLimit)}
	errOut := &capped{limit: orDefault(p.StderrLimit, defaultStderrLimit)}
	ex, err := m.run(ctx, p, bytes.NewReader(in), out, errOut)
	res := CallResult{Stderr: errOut.buf.Bytes(), StderrTruncated: errOut.truncated, Duration: ex.Duration}
	if err != nil {
		return res, err
	}
	if err := stagingExhausted(p); err != nil {
		return res, err
	}
	if ex.Code != 0 {
		if strings.Contains(string(res.Stderr), "out of memory") {
			return res, fmt.Errorf("%w (%d MiB): %s", ErrMemoryLimit, int64(p.memoryPages())/16, tail(res.Stderr))
		}
		return res, &exitError{Code: ex.Code, StderrTail: tail(res.Stderr)}
	}
	if res.Response, err = abi.DecodeResponse(out.buf.Bytes()); err != nil {
		if out.truncated {
			return res, fmt.Errorf("%w: %w of %d bytes", errBadResponse, ErrOutputLimit, out.limit)
		}
		return res, fmt.Errorf("%w: %v", errBadResponse, err)
	}
	return res, nil
}

// stagingExhausted is the ErrStagingLimit of the first overlay mounted by
// p that refused the call a change for its limits: such a call fails
// whatever it answered, since what it staged is not what it meant to.
func stagingExhausted(p Policy) error {
	for _, mt := range p.Mounts {
		if mt.Overlay != nil {
			if err := mt.Overlay.Exhausted(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Describe asks the module for its manifest by running it once with the
// argument --cairn-manifest, with nothing mounted. It is for packing a
// module at build time; at run time manifests are read, never asked for.
func (m *Module) Describe(ctx context.Context) (abi.Manifest, error) {
	var out, errOut bytes.Buffer
	ex, err := m.Run(ctx, Policy{Args: []string{abi.ManifestFlag}, Timeout: 10 * time.Second, Net: noNet{}}, bytes.NewReader(nil), &out, &errOut)
	if err != nil {
		return abi.Manifest{}, err
	}
	if ex.Code != 0 {
		return abi.Manifest{}, &exitError{Code: ex.Code, StderrTail: tail(errOut.Bytes())}
	}
	return abi.DecodeManifest(out.Bytes())
}

// pageSize says a size of n 64 KiB pages in MiB, or in KiB below one.
func pageSize(n uint64) string {
	if n < 16 {
		return fmt.Sprintf("%d KiB", n*64)
	}
	if n%16 == 0 {
		return fmt.Sprintf("%d MiB", n/16)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/16)
}
