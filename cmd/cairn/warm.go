package main

import (
	"context"
	"errors"
	"fmt"
	"os"

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
		Flags:     []cli.Flag{cacheFlag, engineFlag},
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
	rt, err := sandbox.NewRuntime(c.Context, sandbox.Config{CacheDir: dir, CacheMax: max, Engine: engine})
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	busy := newProgress(c.App.ErrWriter, false)
	defer busy.close()
	for i, name := range names {
		busy.set("compiling " + name + " for this machine")
		if _, err := rt.Compile(c.Context, mods[i]); err != nil {
			return fmt.Errorf("warm %s: %w", name, err)
		}
		busy.around(func() { fmt.Fprintf(c.App.Writer, "compiled %s into %s\n", name, dir) }, "")
	}
	return nil
}
