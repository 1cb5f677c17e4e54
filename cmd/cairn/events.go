package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

func eventsCommand() *cli.Command {
	return &cli.Command{
		Name:      "events",
		Usage:     "the events of an agent's runs, as they were shown live (--json: the same JSON Lines)",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{storeFlag, jsonFlag,
			&cli.StringFlag{Name: "run", Usage: "only the events of this run"},
			&cli.BoolFlag{Name: "follow", Usage: "keep printing while a process runs the agent"}},
		Action: eventsAction,
	}
}

func eventsAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn events [--run ID] [--follow] AGENT"))
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	only := c.String("run")
	if err := hasRun(store, c.Args().First(), only); err != nil {
		return err
	}
	ctx, stop := interruptible(context.Background())
	defer stop()
	r := newRenderer(c.App.Writer, c.App.ErrWriter, false)
	err = host.ReadHistory(ctx, store, c.Args().First(), c.Bool("follow"), func(e host.Event, line []byte) error {
		switch {
		case only != "" && e.Run != only:
		case c.Bool(jsonFlag.Name):
			fmt.Fprintf(c.App.Writer, "%s\n", line)
		default:
			r.event(e)
		}
		return nil
	})
	return runError(err)
}

// hasRun checks that agent id has a run named run, when one is named.
func hasRun(store checkpoint.Store, id, run string) error {
	if run == "" {
		return nil
	}
	in, err := host.Inspect(store, id)
	if err != nil {
		return runError(err)
	}
	for _, r := range in.State.Runs {
		if r.ID == run {
			return nil
		}
	}
	return withCode(exitUsage, fmt.Errorf("agent %s has no run %q; `cairn runs %s` lists them", id, run, id))
}
