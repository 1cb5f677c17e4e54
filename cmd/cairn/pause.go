package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// pauseCommand asks, through the store, whichever process runs an agent
// to stop it at its next boundary; see host.Engine.Pause. Given a
// workflow's id, it asks so of the agents of the workflow's running
// steps, and the workflow ends paused once they have.
func pauseCommand() *cli.Command {
	return &cli.Command{
		Name:      "pause",
		Usage:     "ask the process that runs an agent (or a workflow's running steps) to stop it at its next round boundary (exit 3 there; resume continues)",
		ArgsUsage: "AGENT|WORKFLOW",
		Flags:     []cli.Flag{newStoreFlag(), newCacheFlag()},
		Action:    pauseAction,
	}
}

func pauseAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn pause AGENT|WORKFLOW"))
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	id := c.Args().First()
	err = eng.Pause(c.Context, id)
	if errors.Is(err, checkpoint.ErrNotFound) {
		if flow, ferr := workflow.Show(eng.Store(), id); ferr == nil {
			return pauseWorkflow(c, eng, flow)
		}
	}
	if err != nil {
		return runError(agentsBeginning(eng.Store(), id, err))
	}
	fmt.Fprintf(c.App.Writer, "asked agent %s to pause at its next boundary\n", id)
	return nil
}

// pauseWorkflow asks the agents of the workflow's running steps to pause:
// a step that pauses stops the workflow's dispatch of new steps, and the
// workflow ends paused once its running steps have.
func pauseWorkflow(c *cli.Context, eng *host.Engine, rec *checkpoint.Workflow) error {
	flow, err := workflow.Parse(rec.Flow, rec.Dir)
	if err != nil {
		return runError(fmt.Errorf("pause workflow %s: read its steps: %w", rec.ID, err))
	}
	var asked []string
	for _, s := range flow.Steps {
		agent := workflow.StepAgent(rec.ID, s.Name)
		err := eng.Pause(c.Context, agent)
		switch {
		case err == nil:
			asked = append(asked, fmt.Sprintf("step %s (agent %s)", s.Name, agent))
		case errors.Is(err, checkpoint.ErrNotFound) || errors.Is(err, host.ErrNotRunning):
			// Not started, or not running now: nothing of it to pause.
		default:
			return runError(fmt.Errorf("pause workflow %s: %w", rec.ID, err))
		}
	}
	if len(asked) == 0 {
		return runError(fmt.Errorf("workflow %s has no step running (it is %s), so there is nothing to pause; `cairn workflow show %s` lists its steps",
			rec.ID, rec.Status, rec.ID))
	}
	fmt.Fprintf(c.App.Writer, "asked workflow %s's running steps to pause at their next boundaries: %s; the workflow ends paused once they have, and `cairn workflow resume %s` continues it\n",
		rec.ID, strings.Join(asked, ", "), rec.ID)
	return nil
}
