package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/internal/plural"
	"github.com/cairnrun/cairn/sandbox"
)

// toolsGCCommand is `cairn tools gc`: reclaim space in the compile cache.
func toolsGCCommand() *cli.Command {
	return &cli.Command{
		Name: "gc",
		Usage: "reclaim space in the compile cache: files left by stopped processes, another wazero version's directory unused for a week, " +
			"and past --cache-max the compiled modules used least recently; never one used in the last ten minutes",
		Flags: []cli.Flag{newCacheFlag(), newListJSONFlag(),
			&cli.StringFlag{Name: "cache-max", EnvVars: []string{cacheMaxEnv}, DefaultText: "512MiB",
				Usage: "the size the compiled modules are kept under, such as 1GiB (0: remove every one not used in the last ten minutes; off: no bound)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed, remove nothing"}},
		Action: toolsGC,
	}
}

func toolsGC(c *cli.Context) error {
	dir := cacheDir(c)
	if dir == "" {
		return withCode(exitUsage, errors.New("no compile cache: pass --cache DIR"))
	}
	max := sandbox.DefaultCacheMax
	if v := c.String("cache-max"); v != "" {
		var err error
		if max, err = parseCacheMax("--cache-max", v); err != nil {
			return err
		}
	}
	got := sandbox.CacheTrimmed{Files: []string{}}
	var err error
	fi, serr := os.Stat(dir)
	if serr == nil && !fi.IsDir() {
		return withCode(exitUsage, fmt.Errorf("the compile cache %s is not a directory: pass --cache DIR, the directory of compiled modules", dir))
	}
	if !errors.Is(serr, fs.ErrNotExist) {
		got, err = sandbox.TrimCache(dir, sandbox.CacheTrim{Max: max, DryRun: c.Bool("dry-run")})
	}
	if c.Bool(jsonFlag) {
		if werr := writeJSON(c, got); werr != nil {
			return werr
		}
	} else {
		verb := "removed"
		if c.Bool("dry-run") {
			verb = "would remove"
		}
		for _, f := range got.Files {
			fmt.Fprintf(c.App.Writer, "%s %s\n", verb, f)
		}
		fmt.Fprintf(c.App.Writer, "%s %s, %s; the compiled modules left take %s\n", verb, plural.Count(len(got.Files), "file"), plural.Count(got.Bytes, "byte"), plural.Count(got.Kept, "byte"))
	}
	if err != nil && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("tools gc: %w", err)
	}
	if err != nil {
		return fmt.Errorf("tools gc: %w; the compile cache %s cannot be changed here, and nothing after that was removed: "+
			"run `cairn tools gc` as the user who owns it, where it is writable (--dry-run says what it would remove)", err, dir)
	}
	return nil
}
