package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"
)

// Exit codes. They are documented in the README; scripts branch on them.
const (
	exitDone     = 0 // the run finished, or the command succeeded
	exitFailed   = 1 // the run or the command failed
	exitUsage    = 2 // the command line was wrong
	exitPaused   = 3 // the run stopped at a boundary; `cairn resume` continues it
	exitApproval = 4 // the run waits for `cairn approve` or `cairn deny`
	exitLocked   = 5 // another process holds the agent
	exitDiverged = 6 // cairn verify: a recorded call gave another result when run again
)

// exitError carries an exit code through urfave/cli to doMain.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// doMain runs cairn with args and returns the exit code. It is separate
// from main so tests run the whole command line in-process.
func doMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	if len(args) < 2 {
		// Help was not asked for: it goes where errors go.
		app.Writer = stderr
		app.Run(args)
		return exitUsage
	}
	args, err := reorderArgs(app.Commands, args)
	if err == nil {
		err = app.Run(args)
	}
	return exitWith(err, stderr)
}

// exitWith prints err on stderr, what a tool or a model put in it escaped
// (terminalText), and returns the exit code it carries: exitFailed for an
// error that carries none, exitDone for none.
func exitWith(err error, stderr io.Writer) int {
	if err == nil {
		return exitDone
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "cairn:", terminalText(ee.err.Error()))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "cairn:", terminalText(err.Error()))
	return exitFailed
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "cairn",
		Usage: "run LLM agents whose tools are untrusted WebAssembly modules",
		Description: "Flags may come before or after a command's arguments; `--` ends the flags.\n" +
			"Exit codes: 0 done, 1 failed, 2 bad command line or agent file, or unknown agent or run,\n" +
			"3 paused, 4 awaiting approval, 5 the agent is locked by another process, 6 cairn verify found a divergence.",
		Reader:               stdin,
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		// Errors are printed once, by doMain.
		ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{
			runCommand(),
			chatCommand(),
			resumeCommand(),
			pauseCommand(),
			lsCommand(),
			showCommand(),
			logCommand(),
			runsCommand(),
			verifyCommand(),
			eventsCommand(),
			askCommand(),
			snapshotCommand(),
			forkCommand(),
			gcCommand(),
			exportCommand(),
			importCommand(),
			diffCommand(),
			undoCommand(),
			approveCommand(),
			denyCommand(),
			toolsCommand(),
			execCommand(),
			mcpCommand(),
			serveCommand(),
			workflowCommand(),
			memoryCommand(),
			versionCommand(),
			completionCommand(),
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return withCode(exitUsage, fmt.Errorf("%w; `cairn help` lists the commands and flags", err))
		},
	}
	withNamespace(app.Commands)
	usageErrors(app.Commands, app.Name)
	return app
}
