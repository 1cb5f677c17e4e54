package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
)

func askCommand() *cli.Command {
	return &cli.Command{
		Name:      "ask",
		Usage:     "ask an agent's model a side question about its conversation; nothing is added to the agent",
		ArgsUsage: "AGENT QUESTION",
		Flags: []cli.Flag{newStoreFlag(), newCacheFlag(), newEngineFlag(), newListJSONFlag(),
			&cli.StringFlag{Name: "model", Usage: "ask this model instead: PROVIDER:NAME"}},
		Action: askAction,
	}
}

func askAction(c *cli.Context) error {
	if c.NArg() < 2 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn ask AGENT QUESTION"))
	}
	opts := host.AskOptions{ID: c.Args().First(), Question: strings.Join(c.Args().Tail(), " ")}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.close()
	opts.Model = s.model
	asJSON := c.Bool(jsonFlag)
	if !asJSON {
		opts.OnText = func(s string) { fmt.Fprint(c.App.Writer, s) }
	}
	a, err := s.eng.Ask(s.ctx, opts)
	if err != nil {
		return runError(agentsBeginning(s.eng.Store(), opts.ID, err))
	}
	if asJSON {
		return writeJSON(c, struct {
			Answer string   `json:"answer"`
			Usage  any      `json:"usage"`
			Wanted []string `json:"wanted_tools,omitempty"`
		}{a.Text, a.Usage, a.Wanted})
	}
	fmt.Fprintln(c.App.Writer)
	if len(a.Wanted) > 0 {
		fmt.Fprintf(c.App.Writer, "(the model wanted to call %s; a side question runs no tools)\n", strings.Join(a.Wanted, ", "))
	}
	return nil
}
