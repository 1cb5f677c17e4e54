package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// autoDenyFlag names --auto-deny, made for each command by newAutoDenyFlag
// (see storeFlag).
const autoDenyFlag = "auto-deny"

func newAutoDenyFlag() cli.Flag {
	return &cli.BoolFlag{Name: autoDenyFlag,
		Usage: "deny calls that need approval instead of pausing for a person (the model reads the denial)"}
}

func approveCommand() *cli.Command {
	return &cli.Command{
		Name:      "approve",
		Usage:     "approve a call that awaits approval; `cairn resume` (for a workflow's step, `cairn workflow resume`) then runs it",
		ArgsUsage: "AGENT CALL",
		Flags:     []cli.Flag{newStoreFlag(), newCacheFlag()},
		Action:    func(c *cli.Context) error { return decide(c, true) },
	}
}

func denyCommand() *cli.Command {
	return &cli.Command{
		Name:      "deny",
		Usage:     "deny a call that awaits approval; `cairn resume` (for a workflow's step, `cairn workflow resume`) gives the model the reason",
		ArgsUsage: "AGENT CALL",
		Flags: []cli.Flag{newStoreFlag(), newCacheFlag(),
			&cli.StringFlag{Name: "reason", Usage: "why, for the model to read"}},
		Action: func(c *cli.Context) error { return decide(c, false) },
	}
}

func decide(c *cli.Context, approved bool) error {
	if c.NArg() != 2 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn %s AGENT CALL", c.Command.Name))
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	agent, call := c.Args().Get(0), c.Args().Get(1)
	err = eng.Decide(c.Context, agent, call, host.Decision{Approved: approved, Reason: c.String("reason")})
	if errors.Is(err, host.ErrNotAwaiting) {
		return withCode(exitUsage, err)
	}
	if err != nil {
		return runError(agentsBeginning(eng.Store(), agent, err))
	}
	verb := "approved"
	if !approved {
		verb = "denied"
	}
	fmt.Fprintf(c.App.Writer, "%s %s of agent %s; `%s` continues it\n", verb, call, agent, continuation(c.Context, eng.Store(), agent))
	return nil
}

// continuation is the command that continues agent once its call is
// decided: the resume of its workflow when a workflow's step runs it (the
// step's agent or a sub-agent of it), else the resume of its tree's root.
func continuation(ctx context.Context, store checkpoint.Store, agent string) string {
	if id, ok := workflow.OfAgent(ctx, store, agent); ok {
		return "cairn workflow resume " + id
	}
	return "cairn resume " + host.RootOf(ctx, store, agent)
}

// terminalApprover asks on a terminal about each call that needs a
// person. It returns nil when in is not a terminal, so that an unattended
// run pauses awaiting approval instead.
func terminalApprover(in io.Reader, out io.Writer) host.Approver {
	f, ok := in.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return promptApprover(newLineReader(in), out)
}

// promptApprover asks on out and reads the answer from in: y approves,
// anything else denies, and a longer answer is the reason the model reads.
// It asks about one call at a time, so that the line typed after a prompt
// answers that prompt's call: sub-agents running in parallel may ask at
// once. Input that ends before an answer (Ctrl-D) decides nothing:
// host.ErrNoDecision, and the call waits for `cairn approve` or `cairn
// deny`.
func promptApprover(in *lineReader, out io.Writer) host.Approver {
	turn := make(chan struct{}, 1) // held from a prompt to its answer
	return func(ctx context.Context, req host.ApprovalRequest) (host.Decision, error) {
		select {
		case turn <- struct{}{}:
		case <-ctx.Done():
			return host.Decision{}, ctx.Err()
		}
		defer func() { <-turn }()
		fmt.Fprintf(out, "approve %s %s %s? [y/N, or why not] ", req.Call.ID, req.Call.Tool, oneLine(req.Call.Input, 200))
		line, err := in.next(ctx)
		switch {
		case err != nil && err == ctx.Err():
			fmt.Fprintln(out)
			return host.Decision{}, ctx.Err()
		case line == "" && err != nil:
			fmt.Fprintln(out)
			return host.Decision{}, fmt.Errorf("the input ended before an answer: %w", host.ErrNoDecision)
		}
		switch a := strings.TrimSpace(line); strings.ToLower(a) {
		case "y", "yes":
			return host.Decision{Approved: true}, nil
		case "", "n", "no":
			return host.Decision{}, nil
		default:
			return host.Decision{Reason: a}, nil
		}
	}
}

// lineReader reads a person's input a line at a time for whoever asks
// next. A read begun for a question that ended unanswered (its run was
// stopped) goes on, and its line answers the next question, or the next
// prompt of a chat: the input has one reader, so no typed line goes to a
// question no longer asked. One caller at a time.
type lineReader struct {
	in      *bufio.Reader
	mu      sync.Mutex
	pending chan lineRead // a read begun and not yet taken
}

type lineRead struct {
	line string
	err  error
}

func newLineReader(in io.Reader) *lineReader { return &lineReader{in: bufio.NewReader(in)} }

// next returns the next line (with its newline, if it has one) and the
// read's error, or ctx's error if ctx ends first.
func (l *lineReader) next(ctx context.Context) (string, error) {
	l.mu.Lock()
	read := l.pending
	if read == nil {
		read = make(chan lineRead, 1)
		go func() {
			line, err := l.in.ReadString('\n')
			read <- lineRead{line, err}
		}()
		l.pending = read
	}
	l.mu.Unlock()
	select {
	case r := <-read:
		l.mu.Lock()
		l.pending = nil
		l.mu.Unlock()
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
