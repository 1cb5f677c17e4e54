package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"
)

// pauseCommand asks, through the store, whichever process runs an agent
// to stop it at its next boundary; see host.Engine.Pause.
func pauseCommand() *cli.Command {
	return &cli.Command{
		Name:      "pause",
		Usage:     "ask the process that runs an agent to stop it at its next round boundary (exit 3 there; resume continues)",
		ArgsUsage: "AGENT",
		Flags:     []cli.Flag{storeFlag, cacheFlag},
		Action:    pauseAction,
	}
}

func pauseAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn pause AGENT"))
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	id := c.Args().First()
	if err := eng.Pause(c.Context, id); err != nil {
		return runError(err)
	}
	fmt.Fprintf(c.App.Writer, "asked agent %s to pause at its next boundary\n", id)
	return nil
}
