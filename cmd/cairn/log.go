package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "an agent's conversation as a readable transcript",
		ArgsUsage: "AGENT",
		Flags:     []cli.Flag{storeFlag, jsonFlag},
		Action:    logAction,
	}
}

func logAction(c *cli.Context) error {
	in, err := inspect(c, "cairn log AGENT")
	if err != nil {
		return err
	}
	if p := in.State.Parent; p != nil && !c.Bool(jsonFlag.Name) {
		fmt.Fprintf(c.App.Writer, "(sub-agent %s of %s, made by its call %s)\n", p.Name, p.Agent, p.Call)
	}
	if c.Bool(jsonFlag.Name) {
		for _, m := range in.State.Messages {
			if err := writeJSON(c, m); err != nil {
				return err
			}
		}
		return nil
	}
	for _, m := range in.State.Messages {
		printMessage(c.App.Writer, m)
	}
	if calls := in.InterruptedCalls(); len(calls) > 0 {
		fmt.Fprintf(c.App.Writer, "(round %d was interrupted; cairn resume continues it)\n", in.State.Round+1)
	}
	return nil
}

// printMessage writes one message of the conversation.
func printMessage(w io.Writer, m checkpoint.Message) {
	switch m.Role {
	case checkpoint.RoleUser:
		fmt.Fprintf(w, "user: %s\n", m.Text)
	case checkpoint.RoleAssistant:
		if m.Text != "" {
			fmt.Fprintf(w, "model: %s\n", m.Text)
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(w, "  → %s %s %s\n", tc.ID, tc.Name, oneLine(tc.Input, 200))
		}
	case checkpoint.RoleTool:
		mark := "←"
		if m.IsError {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %s %s %s: %s\n", mark, m.CallID, m.ToolName, oneLine(m.Text, 200))
	}
}
