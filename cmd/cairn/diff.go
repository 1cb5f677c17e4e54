package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/plural"
	"github.com/cairnrun/cairn/internal/view"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "what a round changed in the workspace (default: the last round that changed anything)",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{newStoreFlag(), newCacheFlag(), newListJSONFlag(),
			&cli.IntFlag{Name: "round", Usage: "the round to show: any round the store keeps the past of",
				DefaultText: "the last round that changed files and that undo has not taken back"}},
		Action: diffAction,
	}
}

func diffAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn diff [--round N] AGENT"))
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	round, changes, err := eng.Changes(c.Context, c.Args().First(), c.Int("round"))
	if c.IsSet("round") && errors.Is(err, host.ErrNoChanges) {
		return withCode(exitUsage, err) // as log --round N of a round not kept
	}
	if err != nil {
		return runError(agentsBeginning(eng.Store(), c.Args().First(), err))
	}
	if c.Bool(jsonFlag) {
		return writeTerminalJSON(c.App.Writer, struct {
			Round   int               `json:"round"`
			Changes []host.FileChange `json:"changes"`
		}{round, changes})
	}
	fmt.Fprintf(c.App.Writer, "round %d\n", round)
	for _, fc := range changes {
		before, after, err := fc.Texts()
		if err != nil && !errors.Is(err, host.ErrTooLarge) {
			return runError(err)
		}
		printChange(c.App.Writer, fc, before, after, err != nil)
	}
	return nil
}

// printChange shows one path's change, the files before and after it:
// a line diff for text, sizes else, and for a file too large to show
// (over 1 MiB), which was not read, its sizes. The path and the lines
// are a tool's: their controls are escaped, and a newline in a path too,
// which would otherwise forge lines of the diff. A line keeps its tabs;
// its carriage return, if any, shows as \x0d.
func printChange(w io.Writer, fc host.FileChange, before, after []byte, tooLarge bool) {
	path := terminalLine(fc.Path)
	if fc.Call == "" {
		fmt.Fprintf(w, "%s %s\n", fc.Op, path) // from the store's pasts, which keep no calls
	} else {
		fmt.Fprintf(w, "%s %s (%s)\n", fc.Op, path, terminalLine(fc.Call))
	}
	switch {
	case tooLarge:
		fmt.Fprintf(w, "  too large to show: %d → %s\n", fc.BeforeSize, plural.Count(fc.AfterSize, "byte"))
		return
	case !view.IsText(before) || !view.IsText(after):
		fmt.Fprintf(w, "  binary: %d → %s\n", fc.BeforeSize, plural.Count(fc.AfterSize, "byte"))
		return
	}
	for _, l := range view.DiffLines(before, after) {
		fmt.Fprintf(w, "  %s\n", escapeControls(l, "\t"))
	}
}

func undoCommand() *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "take back the workspace changes of the agent's last round that made any",
		ArgsUsage: "AGENT",
		Flags:     []cli.Flag{newStoreFlag(), newCacheFlag(), newListJSONFlag()},
		Action:    undoAction,
	}
}

func undoAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn undo AGENT"))
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	u, err := eng.Undo(c.Context, c.Args().First())
	if err != nil {
		return runError(agentsBeginning(eng.Store(), c.Args().First(), err))
	}
	if c.Bool(jsonFlag) {
		return writeTerminalJSON(c.App.Writer, u)
	}
	fmt.Fprintf(c.App.Writer, "undid round %d: %s restored\n", u.Round, plural.Count(len(u.Restored), "path"))
	for _, p := range u.Conflicts {
		fmt.Fprintf(c.App.Writer, "  left %s: it changed after the round\n", terminalLine(p))
	}
	return nil
}
