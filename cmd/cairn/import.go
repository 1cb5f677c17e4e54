package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "recreate an agent from a file `cairn export` wrote, in this store; `cairn resume` continues it",
		ArgsUsage: "FILE",
		Flags:     []cli.Flag{newStoreFlag()},
		Action:    importAction,
	}
}

func importAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, errors.New("usage: cairn import FILE"))
	}
	f, err := os.Open(c.Args().First())
	if err != nil {
		return withCode(exitUsage, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return withCode(exitUsage, fmt.Errorf("import: %s is a directory: give the file `cairn export` wrote", f.Name()))
	}
	a, err := checkpoint.ReadArchive(f)
	if err != nil {
		return fmt.Errorf("import %s: %w", f.Name(), err)
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	if err := checkpoint.Import(store, a, checkpoint.ThisProcess("import")); err != nil {
		if errors.Is(err, checkpoint.ErrExists) {
			return withCode(exitUsage, err)
		}
		return runError(err)
	}
	fmt.Fprintf(c.App.Writer, "imported agent %s (round %d%s)\n", a.Agent, a.State.Round, subAgents(a.Agents()-1))
	return nil
}
