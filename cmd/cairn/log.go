package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/view"
)

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "an agent's conversation as a readable transcript",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{newStoreFlag(), newListJSONFlag(),
			&cli.IntFlag{Name: "round", Usage: "only the messages round N added, from the store's pasts",
				DefaultText: "every round"}},
		Action: logAction,
	}
}

func logAction(c *cli.Context) error {
	if c.IsSet("round") {
		return logRound(c)
	}
	if c.NArg() != 1 {
		return withCode(exitUsage, errors.New("usage: cairn log [--round N] AGENT"))
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	in, err := host.Inspect(c.Context, store, c.Args().First())
	if err != nil {
		return runError(agentsBeginning(store, c.Args().First(), workflowNotAgent(store, c.Args().First(), "show", err)))
	}
	if p := in.State.Parent; p != nil && !c.Bool(jsonFlag) {
		fmt.Fprintf(c.App.Writer, "(sub-agent %s of %s, made by its call %s)\n", p.Name, p.Agent, p.Call)
	}
	if c.Bool(jsonFlag) {
		return walkConversation(in.State,
			func(cut checkpoint.Compaction) error { return writeJSON(c, map[string]any{"compaction": cut}) },
			func(m conversation.Message) error { return writeJSON(c, m) })
	}
	walkConversation(in.State,
		func(cut checkpoint.Compaction) error { printCompaction(c.App.Writer, cut); return nil },
		func(m conversation.Message) error { printMessage(c.App.Writer, m); return nil })
	if in.RoundOpen() {
		fmt.Fprintln(c.App.Writer, openRound(store, in))
		for _, l := range in.InterruptedExchanges() {
			fmt.Fprintf(c.App.Writer, "      net %s\n", oneLine(l, 200))
		}
	}
	return nil
}

// leaseReader is a store that says who holds an agent's lease and until
// when (pgstore).
type leaseReader interface {
	Running(agent string) (pgstore.Lease, bool, error)
}

// openRound says what became of the round the agent left open: a process
// runs it now, if one holds the agent (a resume would be refused), else it
// awaits a person's decision on its calls, or was interrupted and resume
// continues it.
func openRound(store checkpoint.Store, in *host.Inspection) string {
	round := in.State.Round + 1
	if waiting := in.Awaiting(); !in.Summary.Locked && len(waiting) > 0 {
		var calls []string
		for _, w := range waiting {
			calls = append(calls, w.Call.ID+" "+w.Call.Tool+" "+oneLine(w.Call.Input, 200))
		}
		return fmt.Sprintf("(round %d awaits a decision on %s; decide with cairn approve or cairn deny, then cairn resume)",
			round, strings.Join(calls, ", "))
	}
	if !in.Summary.Locked {
		return fmt.Sprintf("(round %d was interrupted; cairn resume continues it)", round)
	}
	run := "another process"
	if last := in.State.LastRun(); last != nil && last.Ended.IsZero() {
		run += " (run " + last.ID + ")"
	}
	if lr, ok := store.(leaseReader); ok {
		if l, running, err := lr.Running(in.Summary.ID); err == nil && running {
			h := l.Holder
			return fmt.Sprintf("(round %d is in progress in process %d on %s (run %s); its lease expires at %s unless renewed)",
				round, h.PID, h.Host, h.Run, l.Expires.Local().Format(time.RFC3339))
		}
	}
	return fmt.Sprintf("(round %d is in progress: %s runs the agent now)", round, run)
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
		return runError(agentsBeginning(store, c.Args().First(), err))
	}
	for _, m := range msgs {
		if c.Bool(jsonFlag) {
			if err := writeJSON(c, m); err != nil {
				return err
			}
			continue
		}
		printMessage(c.App.Writer, m)
	}
	return nil
}
