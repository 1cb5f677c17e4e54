package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/view"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "an agent's conversation as a readable transcript",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{storeFlag, listJSONFlag,
			&cli.IntFlag{Name: "round", Usage: "only the messages round N added, from the store's pasts"}},
		Action: logAction,
	}
}

func logAction(c *cli.Context) error {
	if c.IsSet("round") {
		return logRound(c)
	}
	in, err := inspect(c, "cairn log [--round N] AGENT")
	if err != nil {
		return err
	}
	if p := in.State.Parent; p != nil && !c.Bool(jsonFlag.Name) {
		fmt.Fprintf(c.App.Writer, "(sub-agent %s of %s, made by its call %s)\n", p.Name, p.Agent, p.Call)
	}
	if c.Bool(jsonFlag.Name) {
		return walkConversation(in.State,
			func(cut checkpoint.Compaction) error { return writeJSON(c, map[string]any{"compaction": cut}) },
			func(m conversation.Message) error { return writeJSON(c, m) })
	}
	walkConversation(in.State,
		func(cut checkpoint.Compaction) error { printCompaction(c.App.Writer, cut); return nil },
		func(m conversation.Message) error { printMessage(c.App.Writer, m); return nil })
	if in.RoundOpen() {
		fmt.Fprintf(c.App.Writer, "(round %d was interrupted; cairn resume continues it)\n", in.State.Round+1)
		for _, l := range in.InterruptedExchanges() {
			fmt.Fprintf(c.App.Writer, "      net %s\n", oneLine(l, 200))
		}
	}
	return nil
}

// printMessage writes one message of the conversation.
func printMessage(w io.Writer, m conversation.Message) {
	switch m.Role {
	case conversation.RoleUser:
		fmt.Fprintf(w, "user: %s\n", terminalText(m.Text))
	case conversation.RoleAssistant:
		if m.Text != "" {
			fmt.Fprintf(w, "model: %s\n", terminalText(m.Text))
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(w, "  → %s %s %s\n", tc.ID, tc.Name, oneLine(tc.Input, 200))
		}
	case conversation.RoleTool:
		mark := "←"
		if m.IsError {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %s %s %s: %s\n", mark, m.CallID, m.ToolName, oneLine(m.Text, 200))
		for _, e := range m.Net {
			fmt.Fprintf(w, "      net %s\n", oneLine(view.ExchangeLine(e), 200))
		}
	}
}

// logRound prints the messages one round added.
func logRound(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn log [--round N] AGENT"))
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	msgs, _, err := host.RoundMessages(c.Context, store, c.Args().First(), c.Int("round"))
	if errors.Is(err, checkpoint.ErrNoPast) {
		return withCode(exitUsage, err)
	}
	if err != nil {
		return runError(err)
	}
	for _, m := range msgs {
		if c.Bool(jsonFlag.Name) {
			if err := writeJSON(c, m); err != nil {
				return err
			}
			continue
		}
		printMessage(c.App.Writer, m)
	}
	return nil
}
