package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
)

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "what a round changed in the workspace (default: the last round that changed anything)",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{storeFlag, cacheFlag, jsonFlag,
			&cli.IntFlag{Name: "round", Usage: "the round to show"}},
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
	round, changes, err := eng.Changes(c.Args().First(), c.Int("round"))
	if err != nil {
		return runError(err)
	}
	if c.Bool(jsonFlag.Name) {
		return writeJSON(c, struct {
			Round   int               `json:"round"`
			Changes []host.FileChange `json:"changes"`
		}{round, changes})
	}
	fmt.Fprintf(c.App.Writer, "round %d\n", round)
	for _, fc := range changes {
		printChange(c.App.Writer, fc)
	}
	return nil
}

// printChange shows one path's change: a line diff for text, sizes else.
func printChange(w io.Writer, fc host.FileChange) {
	fmt.Fprintf(w, "%s %s (%s)\n", fc.Op, fc.Path, fc.Call)
	if !isText(fc.Before) || !isText(fc.After) {
		fmt.Fprintf(w, "  binary: %d → %d bytes\n", fc.BeforeSize, fc.AfterSize)
		return
	}
	for _, l := range lineDiff(lines(fc.Before), lines(fc.After)) {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

func isText(b []byte) bool { return utf8.Valid(b) && !bytes.Contains(b, []byte{0}) }

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// lineDiff marks the lines of a that b drops with "-", those b adds with
// "+", and those they share with " ", by their longest common subsequence.
// Texts of more than 2,000 lines are summarised instead.
func lineDiff(a, b []string) []string {
	if len(a) > 2000 || len(b) > 2000 {
		return []string{fmt.Sprintf("%d lines → %d lines", len(a), len(b))}
	}
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out, i, j = append(out, " "+a[i]), i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out, j = append(out, "+"+b[j]), j+1
		default:
			out, i = append(out, "-"+a[i]), i+1
		}
	}
	return out
}

func undoCommand() *cli.Command {
	return &cli.Command{
		Name:      "undo",
		Usage:     "take back the workspace changes of the agent's last round that made any",
		ArgsUsage: "AGENT",
		Flags:     []cli.Flag{storeFlag, cacheFlag, jsonFlag},
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
	u, err := eng.Undo(c.Args().First())
	if err != nil {
		return runError(err)
	}
	if c.Bool(jsonFlag.Name) {
		return writeJSON(c, u)
	}
	fmt.Fprintf(c.App.Writer, "undid round %d: %d paths restored\n", u.Round, len(u.Restored))
	for _, p := range u.Conflicts {
		fmt.Fprintf(c.App.Writer, "  left %s: it changed after the round\n", p)
	}
	return nil
}
