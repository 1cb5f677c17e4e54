package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/plural"
)

// verifyCommand runs an agent's recorded calls again and compares; see
// host.Engine.Verify and docs/verify.md.
func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "run an agent's recorded tool calls again on what they saw and compare, byte for byte (exit 6 on a divergence)",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{newStoreFlag(), newCacheFlag(), newListJSONFlag(),
			&cli.IntFlag{Name: "round", Usage: "verify the calls of this round only", DefaultText: "every round"},
			&cli.StringFlag{Name: "call", Usage: "verify the call of this id only"}},
		Action: verifyAction,
	}
}

func verifyAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn verify [--round N] [--call ID] AGENT"))
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	rep, err := eng.Verify(c.Context, c.Args().First(), host.VerifyOptions{Round: c.Int("round"), Call: c.String("call")})
	if errors.Is(err, host.ErrNoSuchCall) {
		return withCode(exitUsage, err)
	} else if err != nil {
		return runError(agentsBeginning(eng.Store(), c.Args().First(), err))
	}
	if c.Bool(jsonFlag) {
		err = writeJSON(c, rep)
	} else {
		printVerify(c.App.Writer, rep)
	}
	if err == nil && rep.Diverged > 0 {
		return withCode(exitDiverged, fmt.Errorf("%d of %s of agent %s diverged from their recording", rep.Diverged, plural.Count(len(rep.Calls), "call"), rep.Agent))
	}
	return err
}

// printVerify shows each call verified, what differed, and a summary.
func printVerify(w io.Writer, rep *host.VerifyReport) {
	counts := map[string]int{}
	for _, vc := range rep.Calls {
		counts[vc.Status]++
		fmt.Fprintf(w, "round %d  %s  %s  %s\n", vc.Round, vc.Call, vc.Tool, vc.Status)
		for _, d := range vc.Divergences {
			fmt.Fprintf(w, "  %s\n", terminalText(fmt.Sprint(d)))
		}
		if vc.Status != host.VerifyMatch {
			for _, n := range vc.Notes {
				fmt.Fprintf(w, "  not deterministic: %s\n", terminalText(n))
			}
		}
	}
	fmt.Fprintf(w, "%s: %d match, %d diverged, %d nondeterministic", plural.Count(len(rep.Calls), "call"),
		counts[host.VerifyMatch], counts[host.VerifyDiverged], counts[host.VerifyNondeterministic])
	if rep.Unrecorded > 0 {
		fmt.Fprintf(w, "; %s no recording", plural.Count(rep.Unrecorded, "call has", "calls have"))
	}
	fmt.Fprintln(w)
}
