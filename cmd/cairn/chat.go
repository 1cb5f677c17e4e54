package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "talk with an agent: each line a prompt, answers and tool calls as they come; --id picks the conversation up later",
		Description: "Each line read is a prompt, run as `cairn run --id AGENT PROMPT` runs it. Ctrl-C stops the\n" +
			"prompt's run at its last committed round; Ctrl-D (the end of input) leaves. The conversation is\n" +
			"the agent's, kept in the store: `cairn chat --id AGENT` later goes on with it.\n" +
			listLines("A line that starts with / runs a command on the agent:", append(slices.Clone(chatSlash), "/help"), 96) + ".",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the agent file (YAML); without it, --id names an agent that exists"},
			&cli.StringFlag{Name: "id", Usage: "the agent's id: an agent that exists goes on with its conversation"},
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the directory the tools work in (default: the agent file's workspace)"},
			&cli.StringFlag{Name: "model", Usage: "use this model instead of the agent file's: PROVIDER:NAME"},
			newStoreFlag(), newCacheFlag(), newAutoDenyFlag(),
		},
		Action: chatAction,
	}
}

// chat is one session: the engine, the agent it talks to, and the lines
// it reads prompts (and, on a terminal, approvals) from.
type chat struct {
	c       *cli.Context
	eng     *host.Engine
	opts    host.RunOptions
	lines   *lineReader
	onTerm  bool
	r       *renderer
	started bool // the agent exists: later prompts continue it
}

func chatAction(c *cli.Context) error {
	if c.String("file") == "" && c.String("id") == "" {
		return withCode(exitUsage, errors.New("chat needs an agent file or the id of an agent: cairn chat -f AGENT_FILE [--id ID], cairn chat --id AGENT"))
	}
	ch, err := newChat(c)
	if err != nil {
		return err
	}
	defer ch.eng.Close(context.Background())
	defer ch.r.busy.close()
	return ch.loop()
}

func newChat(c *cli.Context) (*chat, error) {
	af, err := agentFileFlag(c)
	if err != nil {
		return nil, err
	}
	if id := c.String("id"); id != "" {
		if err := checkpoint.CheckID(id); err != nil {
			return nil, withCode(exitUsage, err)
		}
	}
	spec, err := modelFlag(c)
	if err != nil {
		return nil, err
	}
	eng, err := newEngine(c)
	if err != nil {
		return nil, err
	}
	ch := &chat{c: c, eng: eng, lines: newLineReader(c.App.Reader), r: newRenderer(c.App.Writer, c.App.ErrWriter, false),
		opts: host.RunOptions{Agent: af, ID: c.String("id"), Workspace: c.String("workspace"), Model: spec,
			AutoDeny: c.Bool(autoDenyFlag)}}
	if f, ok := c.App.Reader.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		ch.onTerm = true
		ch.opts.Approver = promptApprover(ch.lines, c.App.ErrWriter)
	}
	ch.r.busy = newProgress(c.App.ErrWriter, false)
	if ch.opts.ID == "" {
		ch.opts.ID = af.Name + "-" + shortID()
	}
	ch.started = eng.Store().Exists(ch.opts.ID)
	if !ch.started && af != nil && af.WorkspaceDir() == "" && ch.opts.Workspace == "" {
		// Every prompt would fail for want of it.
		eng.Close(context.Background())
		return nil, withCode(exitUsage, fmt.Errorf("%w with --workspace DIR", host.ErrNoWorkspace))
	}
	if !ch.started && af == nil {
		// No prompt could make the agent: it takes an agent file. An id
		// that begins sub-agents' ids names them, as every command that
		// takes an agent id does.
		id := ch.opts.ID
		notFound := fmt.Errorf("agent %q: %w", id, checkpoint.ErrNotFound)
		err := agentsBeginning(eng.Store(), id, notFound)
		eng.Close(context.Background())
		if err == notFound {
			err = fmt.Errorf("agent %q does not exist: give its agent file to make it: cairn chat -f AGENT_FILE --id %s", id, id)
		}
		return nil, withCode(exitUsage, err)
	}
	// Every prompt would fail for the same model (a script file that is
	// no script, or not there): refused as `cairn run` refuses it. An
	// agent that exists, chatted with without -f, keeps its own model
	// unless --model names one, which is all a script needs.
	withModel := af
	if withModel == nil && spec != nil {
		withModel = &host.AgentFile{Model: *spec}
	}
	if withModel != nil {
		if err := withModel.CheckModel(spec); err != nil {
			eng.Close(context.Background())
			return nil, runError(err)
		}
	}
	return ch, nil
}

// loop reads lines until the input ends.
func (ch *chat) loop() error {
	w := ch.c.App.ErrWriter
	if ch.started {
		fmt.Fprintf(w, "agent %s: going on with its conversation (/log shows it; Ctrl-D leaves)\n", ch.opts.ID)
	} else {
		fmt.Fprintf(w, "agent %s: a new conversation (`cairn chat --id %s` picks it up later; Ctrl-D leaves)\n", ch.opts.ID, ch.opts.ID)
	}
	for {
		if ch.onTerm {
			fmt.Fprint(w, "› ")
		}
		ch.eng.Idle() // a person writes the next line
		line, err := ch.lines.next(context.Background())
		if line = strings.TrimSpace(line); line != "" {
			ch.handle(line)
		}
		if errors.Is(err, io.EOF) {
			if ch.onTerm {
				fmt.Fprintln(w)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read a prompt: %w", err)
		}
	}
}

// handle runs a command line (/...) or a prompt, and says how it ended.
func (ch *chat) handle(line string) {
	if strings.HasPrefix(line, "/") {
		ch.command(strings.Fields(line[1:]))
		return
	}
	if err := ch.prompt(line); err != nil {
		fmt.Fprintln(ch.c.App.ErrWriter, "cairn:", terminalText(err.Error()))
	}
}

// prompt runs one prompt; the first Ctrl-C stops it at its last round.
func (ch *chat) prompt(text string) error {
	ctx, stop := interruptible(ch.c.Context)
	defer stop()
	opts := ch.opts
	opts.Prompt, opts.OnEvent = text, ch.r.event
	if ch.started {
		opts.Agent = nil // the agent goes on with the agent file it was made with
		if ch.c.String("file") != "" {
			opts.Agent = ch.opts.Agent
		}
	}
	res, err := ch.eng.Run(ctx, opts)
	if errors.Is(err, host.ErrInterrupted) {
		return fmt.Errorf("%w (type /resume)", err)
	}
	if err != nil {
		return err
	}
	ch.started = true
	if err := statusError(res); err != nil {
		fmt.Fprintln(ch.c.App.ErrWriter, "cairn:", terminalText(err.Error()))
	}
	return nil
}

// chatCommands are the commands a chat runs on its agent with /NAME; the
// agent's id is their first argument.
var chatCommands = map[string]bool{"show": true, "log": true, "runs": true, "diff": true, "undo": true, "approve": true,
	"deny": true, "resume": true, "snapshot": true, "events": true}

// chatSlash is how the chat's help and /help show the commands it runs:
// chatCommands, on its agent, and /ls, on the store.
var chatSlash = []string{"/show", "/log", "/runs", "/diff [--round N]", "/undo", "/approve CALL",
	"/deny CALL [--reason TEXT]", "/resume", "/snapshot [--label L]", "/events", "/ls"}

// listLines is head and the items after it, separated by commas, in lines
// of at most width bytes, broken between items.
func listLines(head string, items []string, width int) string {
	b := strings.Builder{}
	b.WriteString(head)
	line := len(head)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
			line++
		}
		if line+1+len(it) > width {
			b.WriteByte('\n')
			line = 0
		} else {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(it)
		line += len(it)
	}
	return b.String()
}

// command runs /NAME ARGS as `cairn NAME AGENT ARGS` with the chat's store
// and cache, printing what it prints.
func (ch *chat) command(words []string) {
	w := ch.c.App.ErrWriter
	if len(words) == 0 || words[0] == "help" {
		fmt.Fprintln(w, "commands: "+strings.Join(chatSlash, " "))
		return
	}
	name, args := words[0], words[1:]
	switch {
	case name == "ls":
	case chatCommands[name]:
		args = append([]string{ch.opts.ID}, args...)
	default:
		fmt.Fprintf(w, "cairn: no command /%s; /help lists them\n", name)
		return
	}
	// The chat's input is its own: a command reads none of it.
	noInput := strings.NewReader("")
	app := newApp(noInput, ch.c.App.Writer, w)
	args = append(append([]string{"cairn", name}, args...), ch.sharedFlags(app, name)...)
	if code := doMain(args, noInput, ch.c.App.Writer, w); code != exitDone {
		fmt.Fprintf(w, "(/%s exited %d)\n", name, code)
	}
}

// sharedFlags are the chat's --store and --cache, for the command name
// that takes them.
func (ch *chat) sharedFlags(app *cli.App, name string) []string {
	var out []string
	for _, f := range findCommand(app.Commands, name).Flags {
		switch n := f.Names()[0]; n {
		case storeFlag:
			out = append(out, "--store", storeDir(ch.c))
		case cacheFlag:
			if d := cacheDir(ch.c); d != "" {
				out = append(out, "--cache", d)
			}
		}
	}
	return out
}

// shortID is a random suffix for a new agent's id.
func shortID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}
