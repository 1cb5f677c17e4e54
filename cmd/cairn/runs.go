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
		Flags:     []cli.Flag{storeFlag, jsonFlag},
		Action:    runsAction,
	}
}

// runLine is one run as `cairn runs --json` prints it.
type runLine struct {
	Run         string     `json:"run"`
	ResumedFrom string     `json:"resumed_from,omitempty"`
	Strategy    string     `json:"strategy,omitempty"`
	Started     time.Time  `json:"started"`
	Ended       *time.Time `json:"ended,omitempty"`
	FirstRound  int        `json:"first_round"`
	Rounds      int        `json:"rounds"`
	Status      string     `json:"status"`
	Reason      string     `json:"reason,omitempty"`
}

func runsAction(c *cli.Context) error {
	in, err := inspect(c, "cairn runs AGENT")
	if err != nil {
		return err
	}
	runs := in.State.Runs
	lines := make([]runLine, len(runs))
	for i, r := range runs {
		// A run's rounds reach to where the next run started, or to the
		// boundary for the last one.
		last := in.State.Round
		if i+1 < len(runs) {
			last = runs[i+1].FirstRound
		}
		lines[i] = runLine{Run: r.ID, ResumedFrom: r.ResumedFrom, Strategy: r.Strategy, Started: r.Started,
			FirstRound: r.FirstRound, Rounds: last - r.FirstRound, Status: string(r.Status), Reason: r.Reason}
		if !r.Ended.IsZero() {
			lines[i].Ended = &runs[i].Ended
		}
		if lines[i].Status == "" {
			lines[i].Status = "running"
			if i+1 < len(runs) || !in.Summary.Locked {
				lines[i].Status = "interrupted"
			}
		}
	}
	if c.Bool(jsonFlag.Name) {
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
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", l.Run, from, l.Started.Local().Format(time.DateTime), ended, l.Rounds, outcome)
	}
	return w.Flush()
}
