package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/plural"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write an agent — state, interrupted round, bookmarks, events, agent file and modules — to one file that `cairn import` reads into any store",
		ArgsUsage: "-o FILE AGENT",
		Flags: []cli.Flag{newStoreFlag(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the file to write"}},
		Action: exportAction,
	}
}

func exportAction(c *cli.Context) error {
	out := c.String("output")
	if c.NArg() != 1 || out == "" {
		return withCode(exitUsage, errors.New("usage: cairn export -o FILE AGENT"))
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	a, err := host.Export(store, c.Args().First())
	if err != nil {
		return runError(agentsBeginning(store, c.Args().First(), err))
	}
	if err := writeFileAtomic(out, a); err != nil {
		return fmt.Errorf("write export %s: %w", out, err)
	}
	fmt.Fprintf(c.App.Writer, "exported agent %s (round %d, %s%s) to %s\n", a.Agent, a.State.Round, plural.Count(len(a.Blobs), "blob"), subAgents(a.Agents()-1), out)
	if s, err := store.Summary(a.Agent); err == nil && s.Locked {
		// Exporting takes no lock: the copy is of the last committed round
		// while a run goes on, and one resumed elsewhere would run apart.
		fmt.Fprintf(c.App.ErrWriter, "cairn: agent %s is running in another process: the export holds its round %d, and its run goes on; "+
			"import and resume the copy only once that run has stopped, or it runs apart from it\n", a.Agent, a.State.Round)
	}
	return nil
}

// writeFileAtomic writes the archive beside path and renames it there, so
// that path holds a whole export or what it held before.
func writeFileAtomic(path string, a *checkpoint.Archive) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".cairn-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := a.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// subAgents words how many sub-agents an archive carries besides its agent.
func subAgents(n int) string {
	if n == 0 {
		return ""
	}
	return ", " + plural.Count(n, "sub-agent")
}
