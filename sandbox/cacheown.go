package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/cairnrun/cairn/internal/fileowner"
)

// Under a small memory limit a module the compile cache lacks is compiled
// into it apart (see EngineAuto) and loaded from its file there. When the
// cache cannot take the file (a full disk, a read-only cache), there is
// no file to load, and loading the module would compile it cold in this
// process, past the limit compiling apart is for. Such a module is
// compiled apart again into a directory of the Runtime's own among the
// temporary files (os.TempDir, $TMPDIR), made private to the user, and
// loaded from there by runtimes of its own, whose compilation cache that
// directory is; its file is removed once loaded. Its code stays in
// memory: Trim keeps the code of a module the cache lacks. The directory
// is removed as the Runtime closes, and held locked until then: one a
// process left as it ended is removed by the next that makes its own. A
// directory that cannot take the file either leaves the module to be
// compiled in this process, as before.

// writable reports whether wazero's directory in the compile cache can be
// written, as far as access(2) tells: a read-only file system, or one
// made immutable, cannot; a full disk may not take a file still.
func (r *Runtime) writable() bool {
	const wOK = 2 // W_OK
	return syscall.Access(filepath.Join(r.cacheDir, versionDir()), wOK) == nil
}

// ownPrefix begins the name of a Runtime's own directory.
const ownPrefix = "cairn-compile-"

// errLoadOwn is what a repair compiled apart (see compileFor) returns
// when the module is to be loaded from the Runtime's own directory.
var errLoadOwn = errors.New("the module is loaded from a file of its own")

// isOwn reports whether m is loaded from the Runtime's own directory.
func (m *Module) isOwn() bool {
	m.r.mu.Lock()
	defer m.r.mu.Unlock()
	return m.own
}

// useOwn has m loaded from the Runtime's own directory from now on, when
// it can be made and m has not been compiled in a runtime of the cache's:
// its instances are made in the runtime it was compiled in.
func (r *Runtime) useOwn(m *Module) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.own || len(m.compiled) > 0 || m.interpret {
		return
	}
	if _, err := r.ownCacheLocked(); err == nil {
		m.own = true
	}
}

// ownCacheLocked is the compilation cache in the Runtime's own directory,
// made at its first use; r.mu is held.
func (r *Runtime) ownCacheLocked() (wazero.CompilationCache, error) {
	if r.ownCache != nil {
		return r.ownCache, nil
	}
	dir, err := os.MkdirTemp("", ownPrefix+"*")
	if err != nil {
		return nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		lock.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	r.ownDir, r.ownCache, r.ownLock = dir, c, lock
	removeEndedOwn(dir)
	return c, nil
}

// lockDir locks the directory dir (flock) and returns it open, which
// holds the lock until it is closed or the process ends; one that another
// holds is an error.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// endedOwnAge is how old a Runtime's own directory must be for another
// to remove it, unlocked: a process locks its own as soon as it has made
// it.
const endedOwnAge = time.Minute

// removeEndedOwn removes, beside mine, the own directories of Runtimes
// whose processes have ended (kill -9, the OOM killer) before they could:
// the user's, a minute old, and not locked. A process that runs holds
// its own locked (see lockDir).
func removeEndedOwn(mine string) {
	dirs, _ := filepath.Glob(filepath.Join(filepath.Dir(mine), ownPrefix+"*"))
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if d == mine || err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < endedOwnAge {
			continue
		}
		if uid, ok := fileowner.UID(fi); !ok || uid != os.Getuid() {
			continue
		}
		if lock, err := lockDir(d); err == nil {
			os.RemoveAll(d)
			lock.Close()
		}
	}
}

// closeOwnLocked closes the compilation cache in the Runtime's own
// directory, and removes the directory; r.mu is held.
func (r *Runtime) closeOwnLocked(ctx context.Context) {
	if r.ownCache == nil {
		return
	}
	r.ownCache.Close(ctx)
	os.RemoveAll(r.ownDir)
	r.ownLock.Close()
	r.ownCache, r.ownDir, r.ownLock = nil, "", nil
}

// loadOwn compiles code, m's, in rt, a runtime of the Runtime's own
// directory: once compiled apart into it, unless m is compiled already
// (wazero then takes it from memory), and its file removed once loaded.
// A directory that could not take the file leaves wazero to compile the
// module here; it fails that compile, whose file it cannot write either,
// but keeps the code, which asking again finds.
func (r *Runtime) loadOwn(ctx context.Context, rt wazero.Runtime, m *Module, code []byte) (wazero.CompiledModule, error) {
	r.apartMu.Lock()
	defer r.apartMu.Unlock()
	r.mu.Lock()
	held, dir := len(m.compiled) > 0, r.ownDir
	r.mu.Unlock()
	if !held && dir != "" {
		defer r.lockApart(ctx)()
		if err := r.runApart(ctx, m, code, dir); err != nil {
			return nil, err
		}
		file := filepath.Join(dir, filepath.FromSlash(entryName(code, !m.stops)))
		defer os.Remove(file)
		if fi, err := os.Lstat(file); err == nil && fi.Mode().IsRegular() {
			r.ownLoads.Add(1)
		}
	}
	cm, err := rt.CompileModule(ctx, code)
	if err != nil && ctx.Err() == nil {
		if again, err2 := rt.CompileModule(ctx, code); err2 == nil {
			return again, nil
		}
	}
	return cm, err
}
