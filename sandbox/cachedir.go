package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tetratelabs/wazero"
)

// The compile cache on disk is only a cache. wazero keeps a file for each
// module it compiled, in a directory of its own under the cache directory
// (named for its version and the machine), and reads it back instead of
// compiling; it fails the compile of a module whose file it cannot read
// as written, and waits forever on one that is a FIFO. So cairn clears
// from it what wazero cannot have written (clearCacheDir) before a
// compile, and a compile that fails is done again once the module's file
// is written afresh (renewEntry). What is left of a damaged cache costs
// compiling the module again, never a call.

// restoreCacheDir makes the compile cache's directories again, private to
// the user, if they were removed since the Runtime made them (a cache
// cleaned while the process waited), and clears them (clearCacheDir).
// wazero writes what it compiles into them and fails the compile when it
// cannot; after Trim, that would fail every call of a module whose code
// was in memory before. Failing here is left to the compile to report.
func (r *Runtime) restoreCacheDir() {
	if r.cacheDir == "" {
		return
	}
	if err := privateDir(r.cacheDir); err != nil {
		return
	}
	clearCacheDir(r.cacheDir)
	// wazero makes its own directory under it, named for its version.
	if c, err := wazero.NewCompilationCacheWithDir(r.cacheDir); err == nil {
		c.Close(context.Background())
	}
}

// clearCacheDir removes from the compile cache in dir what wazero did not
// write there: a wazero directory that is not a directory, and in one an
// entry that is not a regular file (a directory, a link, a FIFO, which
// wazero would wait on). What cannot be removed is left to the compile.
// It also removes what a repair (renewEntry) left an hour ago or more: a
// process that died during one leaves its directory behind.
func clearCacheDir(dir string) {
	renews, _ := filepath.Glob(filepath.Join(dir, renewPrefix+"*"))
	for _, d := range renews {
		if fi, err := os.Lstat(d); err == nil && time.Since(fi.ModTime()) >= staleRenew {
			os.RemoveAll(d)
		}
	}
	wazeroDirs, _ := filepath.Glob(filepath.Join(dir, "wazero-*"))
	for _, d := range wazeroDirs {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			os.Remove(d)
			continue
		}
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if !e.Type().IsRegular() {
				os.RemoveAll(filepath.Join(d, e.Name()))
			}
		}
	}
}

// renewPrefix names the directories renewEntry compiles in; one older
// than staleRenew is no repair in progress.
const (
	renewPrefix = "cairn-renew-"
	staleRenew  = time.Hour
)

// compileModule compiles code in rt, a runtime of r. With a compile cache
// on disk, a compile that fails may have failed on the cache rather than
// on the module. One that failed only to write the module's file (a full
// disk) is taken as it is: wazero fails it but keeps what it compiled in
// memory, where asking again finds it, without compiling. Otherwise the
// compile is done again once the module's entry is written afresh
// (renewEntry), or, when the cache cannot be written, at once. Compiling
// the module on its own tells which failed. Under a small memory limit
// (repairApart reports it compiled apart, see Runtime.apart) the file is
// written afresh by a compile apart first, so that this process compiles
// nothing cold. It returns ctx's end as the compile's error, for the
// caller to report.
func (r *Runtime) compileModule(ctx context.Context, rt wazero.Runtime, code []byte, k runtimeKey, repairApart func() (bool, error)) (wazero.CompiledModule, error) {
	cm, err := rt.CompileModule(ctx, code)
	if err == nil || ctx.Err() != nil {
		return cm, err
	}
	if k.interpret || r.cacheDir == "" {
		return nil, fmt.Errorf("%w: %v", errInvalidModule, err)
	}
	// A damaged file fails again as it is read, which costs no compile.
	if cm, again := rt.CompileModule(ctx, code); again == nil || ctx.Err() != nil {
		return cm, again
	}
	// load compiles code again, after a repair: taking it from memory
	// when the compile failed only to write its file.
	load := func() (wazero.CompiledModule, error) {
		cm, err := rt.CompileModule(ctx, code)
		if err == nil || ctx.Err() != nil {
			return cm, err
		}
		if cm, again := rt.CompileModule(ctx, code); again == nil || ctx.Err() != nil {
			return cm, again
		}
		return nil, err
	}
	if apart, err := repairApart(); err != nil {
		return nil, err
	} else if apart {
		if cm, err = load(); err == nil || ctx.Err() != nil {
			return cm, err
		}
	}
	r.recompiles.Add(1)
	if err := renewEntry(ctx, r.cacheDir, code, k); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidModule, err)
	}
	if cm, err = load(); err == nil || ctx.Err() != nil {
		return cm, err
	}
	r.recompiles.Add(1)
	if err := compileToCache(ctx, "", code, k); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidModule, err)
	}
	return nil, fmt.Errorf("load the module from the compile cache in %s: %v; its entry there cannot be written again: make the directory writable, or remove it", r.cacheDir, err)
}

// renewEntry writes the compile cache's entry for wasm in dir afresh,
// after a compile failed: it compiles wasm into a directory of its own in
// dir, and moves what wazero wrote there over the entry (wazero names it
// for the module, how it is compiled and the machine, so compiling is how
// to learn its name). It returns the compile's error when the module does
// not compile on its own. In a cache that cannot take a fresh file (on a
// full disk, where the directory can be made but not the file, or none
// can be made) the entry is removed, as a full file system lets one do,
// so that the compile that follows compiles the module and keeps it in
// memory; a read-only cache is left to that compile, which meets it.
func renewEntry(ctx context.Context, dir string, wasm []byte, k runtimeKey) error {
	entry := filepath.Join(dir, filepath.FromSlash(entryName(wasm, k.closeOnDone)))
	tmp, err := os.MkdirTemp(dir, renewPrefix+"*")
	if err != nil {
		os.Remove(entry)
		return nil
	}
	defer os.RemoveAll(tmp)
	if err := compileToCache(ctx, tmp, wasm, k); errors.Is(err, errCacheWrite) {
		os.Remove(entry)
		return nil
	} else if err != nil {
		return err
	}
	fresh, _ := filepath.Glob(filepath.Join(tmp, "wazero-*", "*"))
	for _, f := range fresh {
		dst := filepath.Join(dir, filepath.Base(filepath.Dir(f)), filepath.Base(f))
		if os.Rename(f, dst) != nil {
			// A directory in its way, or wazero's directory gone.
			os.RemoveAll(dst)
			os.MkdirAll(filepath.Dir(dst), 0o700)
			os.Rename(f, dst)
		}
	}
	return nil
}

// errCacheWrite is compileToCache's error for a module that compiled but
// whose file could not be written into the cache (a full disk): no fault
// of the module's.
var errCacheWrite = errors.New("the compiled module could not be written into the compile cache")

// compileToCache compiles wasm with the compiler into the compile cache in
// dir ("": in memory only) as a runtime of k does: closing an instance
// when its context ends or not (wazero's entry differs), and under k's
// memory limit (0: wazero's own), so that a module refused for its memory
// is refused here too, with the same cause, before anything is compiled.
// A module that compiled but whose file could not be written is
// errCacheWrite: wazero fails that compile but keeps what it compiled in
// memory, where compiling again finds it.
func compileToCache(ctx context.Context, dir string, wasm []byte, k runtimeKey) error {
	cfg := wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(k.closeOnDone)
	if k.pages > 0 {
		cfg = cfg.WithMemoryLimitPages(k.pages)
	}
	if dir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			return fmt.Errorf("compile cache %s: %w", dir, err)
		}
		defer cache.Close(ctx)
		cfg = cfg.WithCompilationCache(cache)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	defer rt.Close(ctx)
	_, err := rt.CompileModule(ctx, wasm)
	if err != nil && dir != "" && ctx.Err() == nil {
		if _, again := rt.CompileModule(ctx, wasm); again == nil {
			return fmt.Errorf("%w: %v", errCacheWrite, err)
		}
	}
	return err
}
