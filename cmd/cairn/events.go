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
		Flags: []cli.Flag{newStoreFlag(), newJSONFlag(),
			&cli.StringFlag{Name: "run", Usage: "only the events of this run"},
			&cli.StringFlag{Name: "agent", Usage: "only the events of this sub-agent of the agent's tree"},
			&cli.BoolFlag{Name: "follow", Usage: "keep printing while a process runs the agent"}},
		Action: eventsAction,
	}
}

func eventsAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn events [--run ID] [--agent SUB-AGENT] [--follow] AGENT"))
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	// ReadHistory refuses an agent show and log refuse (damaged, cut
	// short, of a newer schema), with their error; only --run reads the
	// agent's state, for its runs.
	only, agent := c.String("run"), c.String("agent")
	if err := hasRun(c.Context, store, c.Args().First(), only); err != nil {
		return err
	}
	if err := inTree(c.Context, store, c.Args().First(), agent); err != nil {
		return err
	}
	ctx, stop := interruptible(context.Background())
	defer stop()
	r := newRenderer(c.App.Writer, c.App.ErrWriter, false)
	err = host.ReadHistory(ctx, store, c.Args().First(), c.Bool("follow"), func(e host.Event, line []byte) error {
		switch {
		case only != "" && e.Run != only && !e.Skipped():
		case agent != "" && e.Agent != agent && !e.Skipped():
		case c.Bool(jsonFlag):
			fmt.Fprintf(c.App.Writer, "%s\n", line)
		default:
			r.event(e)
		}
		return nil
	})
	return runError(agentsBeginning(store, c.Args().First(), err))
}

// hasRun checks that the agent has a run named run, when one is named.
func hasRun(ctx context.Context, store checkpoint.Store, id, run string) error {
	if run == "" {
		return nil
	}
	in, err := host.Inspect(ctx, store, id)
	if err != nil {
		return runError(agentsBeginning(store, id, err))
	}
	for _, r := range in.State.Runs {
		if r.ID == run {
			return nil
		}
	}
	return withCode(exitUsage, fmt.Errorf("agent %s has no run %q; `cairn runs %s` lists them", id, run, id))
}

// inTree checks that sub is an agent of the tree of id, when one is named:
// id itself or a sub-agent below it.
func inTree(ctx context.Context, store checkpoint.Store, id, sub string) error {
	for a := sub; a != "" && a != id; {
		in, err := host.Inspect(ctx, store, a)
		if err != nil {
			return runError(agentsBeginning(store, a, err))
		}
		if in.State.Parent == nil {
			return withCode(exitUsage, fmt.Errorf("agent %s is not a sub-agent of %s; `cairn ls` shows the trees", sub, id))
		}
		a = in.State.Parent.Agent
	}
	return nil
}
