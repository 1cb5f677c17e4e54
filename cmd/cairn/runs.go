package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"
)

func runsCommand() *cli.Command {
	return &cli.Command{
		Name:      "runs",
		Usage:     "each run of an agent: id, what it resumed, start and end, rounds, outcome",
		ArgsUsage: "AGENT",
		Flags:     []cli.Flag{newStoreFlag(), newListJSONFlag()},
		Action:    runsAction,
	}
}

func runsAction(c *cli.Context) error {
	in, err := inspect(c, "cairn runs AGENT")
	if err != nil {
		return err
	}
	lines := in.Runs()
	if c.Bool(jsonFlag) {
		for _, l := range lines {
			if err := writeJSON(c, l); err != nil {
				return err
			}
		}
		return nil
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tRESUMED FROM\tSTARTED\tENDED\tROUNDS\tOUTCOME")
	for _, l := range lines {
		ended, from := "-", "-"
		if l.Ended != nil {
			ended = l.Ended.Local().Format(time.DateTime)
		}
		if l.ResumedFrom != "" {
			from = l.ResumedFrom + " (" + l.Strategy + ")"
		}
		outcome := l.Status
		if l.Reason != "" {
			outcome += ": " + l.Reason
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", l.Run, from, l.Started.Local().Format(time.DateTime), ended, l.Rounds, terminalLine(outcome))
	}
	return w.Flush()
}
