package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/guest/builtin"
	"github.com/cairnrun/cairn/sandbox"
)

// toolsWarmCommand is `cairn tools warm`: compile modules into the compile
// cache ahead of a first run.
func toolsWarmCommand() *cli.Command {
	return &cli.Command{
		Name:      "warm",
		Usage:     "compile tool modules into the compile cache, so that the next run starts warm (default: the built-in tools)",
		ArgsUsage: "[MODULE.wasm]...",
		Flags:     []cli.Flag{newCacheFlag(), newEngineFlag()},
		Action:    toolsWarm,
	}
}

func toolsWarm(c *cli.Context) error {
	engine, err := engineChoice(c)
	if err != nil {
		return err
	}
	if engine == sandbox.EngineInterpreter {
		return withCode(exitUsage, errors.New("--engine interpreter keeps nothing in the compile cache; warm with auto or compiler"))
	}
	dir := cacheDir(c)
	if dir == "" {
		return withCode(exitUsage, errors.New("no compile cache: pass --cache DIR"))
	}
	names, mods := []string{"the built-in tools"}, [][]byte{builtin.Module}
	if c.NArg() > 0 {
		names, mods = c.Args().Slice(), nil
		for _, p := range names {
			b, err := os.ReadFile(p)
			if err != nil {
				return withCode(exitUsage, err)
			}
			mods = append(mods, b)
		}
	}
	max, err := runCacheMax()
	if err != nil {
		return err
	}
	busy := newProgress(c.App.ErrWriter, false)
	defer busy.close()
	for i, name := range names {
		busy.set("compiling " + name + " for this machine")
		before := cacheFiles(dir)
		if err := compileInto(c.Context, sandbox.Config{CacheDir: dir, CacheMax: max, Engine: engine}, mods[i]); err != nil {
			return fmt.Errorf("warm %s: %w", name, err)
		}
		said := fmt.Sprintf("compiled %s into %s", name, dir)
		after := cacheFiles(dir)
		if entry := sandbox.CachedFile(dir, mods[i]); entry != "" {
			if was, ok := before[entry]; ok && was.size == after[entry].size {
				said = fmt.Sprintf("found %s compiled in %s already", name, dir)
			}
		} else if !changedSince(before, after) {
			// The cache has no record of the module, which a cache that
			// cannot be written lacks: whether it holds the module's
			// file is learnt by compiling it where its name shows.
			kept, err := keptIn(c.Context, dir, mods[i], engine)
			if err != nil {
				return fmt.Errorf("warm %s: compiled, but the compile cache %s could not keep its file (%v): "+
					"make %s writable, or free space on its file system, and warm again; until then each run compiles it cold", name, dir, err, dir)
			}
			if kept {
				said = fmt.Sprintf("found %s compiled in %s already", name, dir)
			}
		}
		busy.around(func() { fmt.Fprintln(c.App.Writer, said) }, "")
	}
	return nil
}

// compileInto compiles wasm in a Runtime of cfg, closed once the work it
// began for later calls (marking the file it loaded) has ended.
func compileInto(ctx context.Context, cfg sandbox.Config, wasm []byte) error {
	rt, err := sandbox.NewRuntime(ctx, cfg)
	if err != nil {
		return err
	}
	_, err = rt.Compile(ctx, wasm)
	rt.Close(context.Background())
	return err
}

// A fileStamp is the size and modification time of a file.
type fileStamp struct {
	size int64
	mod  time.Time
}

// cacheFiles are the files of compiled modules in the compile cache dir,
// by their path under it.
func cacheFiles(dir string) map[string]fileStamp {
	files := map[string]fileStamp{}
	paths, _ := filepath.Glob(filepath.Join(dir, "wazero-*", "*"))
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files[rel] = fileStamp{fi.Size(), fi.ModTime()}
		}
	}
	return files
}

// changedSince reports whether a file of after is not in before as it is.
func changedSince(before, after map[string]fileStamp) bool {
	for p, st := range after {
		if was, ok := before[p]; !ok || was.size != st.size || !was.mod.Equal(st.mod) {
			return true
		}
	}
	return false
}

// keptIn reports whether the compile cache dir holds the files of wasm,
// which a compile into it neither wrote nor refreshed: it compiles wasm
// into a directory of its own among the temporary files to learn their
// names. When dir lacks them, the error is why it cannot take them. When
// the temporary files cannot take them either, it is why dir cannot take
// a file as large as wasm, if it cannot.
func keptIn(ctx context.Context, dir string, wasm []byte, engine sandbox.Engine) (bool, error) {
	tmp, err := os.MkdirTemp("", "cairn-warm-")
	if err != nil {
		return false, cannotTakeOr(dir, int64(len(wasm)), fmt.Errorf("the temporary files cannot tell which they are: %w", err))
	}
	defer os.RemoveAll(tmp)
	if err := compileInto(ctx, sandbox.Config{CacheDir: tmp, CacheMax: -1, Engine: engine}, wasm); err != nil {
		return false, err
	}
	want := cacheFiles(tmp)
	if len(want) == 0 {
		return false, cannotTakeOr(dir, int64(len(wasm)), errors.New("the temporary files could not take them either, to tell which they are"))
	}
	for p, st := range want {
		if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.Size() != st.size {
			return false, cannotTake(filepath.Dir(filepath.Join(dir, p)), st.size)
		}
	}
	return true, nil
}

// cannotTake is why the directory dir cannot take a file of size bytes,
// as writing one there tells.
func cannotTake(dir string, size int64) error {
	f, err := os.CreateTemp(dir, ".cairn-warm-")
	if err != nil {
		return unwrapPathError(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(make([]byte, size)); err != nil {
		return unwrapPathError(err)
	}
	if err := f.Sync(); err != nil {
		return unwrapPathError(err)
	}
	return errTookIt
}

// errTookIt is cannotTake's error when the directory took the file.
var errTookIt = errors.New("it took a file of that size when asked again")

// cannotTakeOr is why the directory dir cannot take a file of size
// bytes, or unknown when it takes one.
func cannotTakeOr(dir string, size int64, unknown error) error {
	if err := cannotTake(dir, size); !errors.Is(err, errTookIt) {
		return err
	}
	return unknown
}

// unwrapPathError is the cause of a *fs.PathError, without the path.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
