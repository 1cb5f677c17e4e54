package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/tetratelabs/wazero/experimental"
)

// compileEnv names, in the environment of a process ServeCompile serves,
// the compile cache to compile the module on its stdin into; closeEnv is
// "1" when the module runs in a runtime that closes an instance when the
// context of its call ends (a module without stop checks), "0" when not.
// wazero names the module's file for that too, so the process compiles it
// as the Runtime will load it.
const (
	compileEnv = "CAIRN_SANDBOX_COMPILE_INTO"
	closeEnv   = "CAIRN_SANDBOX_COMPILE_CLOSE_ON_DONE"
)

// parentEnv names the descriptor, in a process ServeCompile serves, of a
// pipe the Runtime that started it holds the other end of: it reads end
// of file once that process has ended, however it ended (kill -9, the
// kernel's OOM killer), and the compile then ends too. Only the Runtime
// keeps the compile's time limit, and a process started again would
// compile the module beside it, twice the memory under the limit.
const parentEnv = "CAIRN_SANDBOX_COMPILE_PARENT"

// servesCompile is set once ServeCompile has been called: only then does
// a Runtime start this program's executable to compile apart.
var servesCompile atomic.Bool

// ServeCompile compiles into a compile cache, when this process was started
// to do that by a Runtime (see EngineAuto), and then exits; otherwise it
// returns at once. A program using EngineAuto calls it first thing in main
// (and a test binary in TestMain), since the Runtime starts the program's
// own executable for it; in a program that has not called it, EngineAuto
// compiles in process.
func ServeCompile() {
	dir, ok := os.LookupEnv(compileEnv)
	if !ok {
		servesCompile.Store(true)
		return
	}
	if fd, err := strconv.Atoi(os.Getenv(parentEnv)); err == nil && fd > 2 {
		go endWithParent(os.NewFile(uintptr(fd), "parent"))
	}
	if err := compileInto(dir, os.Getenv(closeEnv) == "1", os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, errRefused) {
			os.Exit(exitRefused)
		}
		os.Exit(2)
	}
	os.Exit(0)
}

// endWithParent ends this process once f, its parent's pipe (see
// parentEnv), reads end of file.
func endWithParent(f *os.File) {
	if f == nil {
		return
	}
	var b [1]byte
	if _, err := f.Read(b[:]); errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "the process that started this compile has ended")
		os.Exit(2)
	}
}

// errRefused is compileInto's error for a module the compiler refuses,
// which the process exits with exitRefused for.
var errRefused = errors.New("the compiler refuses the module")

const exitRefused = 3

// compileInto compiles the module read from in with the compiler, one
// function at a time, into the compile cache in dir, to run closing an
// instance when its context ends as closeOnDone says. A compile that fails
// is done again once the module's entry in the cache is written afresh
// (see renewEntry): only a module that does not compile on its own is
// refused. A cache that cannot be written (errCacheWrite) is the
// Runtime's to meet when it compiles the module itself.
func compileInto(dir string, closeOnDone bool, in io.Reader) error {
	wasm, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("read the module: %w", err)
	}
	ctx := experimental.WithCompilationWorkers(context.Background(), 1)
	k := runtimeKey{closeOnDone: closeOnDone}
	if err := compileToCache(ctx, dir, wasm, k); err == nil || errors.Is(err, errCacheWrite) {
		return nil
	}
	if err := renewEntry(ctx, dir, wasm, k); err != nil {
		return fmt.Errorf("%w: %v", errRefused, err)
	}
	return nil
}

// compileApart compiles wasm, the code of m, into the compile cache in a
// process of its own (this executable, see ServeCompile), one at a time,
// so that what compiling holds is freed when it ends: as m's runtime
// compiles it, closing an instance when its context ends for a module
// without stop checks, so that the file written is the one m loads. When
// the cache cannot take the file (a full disk, a read-only cache), m is
// loaded from a file of its own instead (see useOwn).
//
// With damaged set, the module's file in the cache failed to load: the
// process writes it afresh (see compileInto), though the module is marked.
func (r *Runtime) compileApart(ctx context.Context, m *Module, wasm []byte, damaged bool) error {
	digest := m.digest
	r.apartMu.Lock()
	defer r.apartMu.Unlock()
	r.mu.Lock()
	unwritten := m.unwritten
	r.mu.Unlock()
	entry := entryName(wasm, !m.stops)
	if unwritten || !damaged && r.cachedEntry(digest) == entry {
		return nil
	}
	r.restoreCacheDir() // before the process reads from it
	defer r.lockApart(ctx)()
	if !damaged && r.cachedEntry(digest) == entry {
		return nil // compiled by the process that held the lock
	}
	if !r.writable() {
		// A read-only cache: its file could not be written.
		r.mu.Lock()
		m.unwritten = true
		r.mu.Unlock()
		r.useOwn(m)
		return nil
	}
	if err := r.runApart(ctx, m, wasm, r.cacheDir); err != nil {
		return err
	}
	// The process compiled the module; its file is there unless the
	// cache could not be written (a full disk), which is not marked.
	if !r.markCached(digest, entry) {
		r.mu.Lock()
		m.unwritten = true
		r.mu.Unlock()
		r.useOwn(m)
	}
	return nil
}

// runApart compiles wasm, the code of m, into the compile cache in dir in
// a process of its own (see compileApart), and waits for it to end.
func (r *Runtime) runApart(ctx context.Context, m *Module, wasm []byte, dir string) error {
	digest := m.digest
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("compile %s apart: find this program: %w", digest, err)
	}
	ctx, cancel := r.limits.compileContext(ctx)
	defer cancel()
	alive, held, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("compile %s apart: %w", digest, err)
	}
	defer alive.Close()
	defer held.Close()
	cmd := exec.CommandContext(ctx, exe)
	cmd.ExtraFiles = []*os.File{alive}
	closeOnDone := "0"
	if !m.stops {
		closeOnDone = "1"
	}
	cmd.Env = append(os.Environ(), compileEnv+"="+dir, closeEnv+"="+closeOnDone, parentEnv+"=3")
	cmd.Stdin = bytes.NewReader(wasm)
	r.apartRuns.Add(1)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: compiling it did not end within %s or before its caller gave up (Config.CompileTimeout)", ErrCompileLimit, r.limits.timeout)
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == exitRefused {
			return fmt.Errorf("%w: %s", errInvalidModule, strings.TrimSpace(stderr.String()))
		}
		return fmt.Errorf("compile %s in a process of its own: %w (%s); free some memory, or fill the compile cache ahead on a machine of the same CPU", digest, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
