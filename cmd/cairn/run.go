package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run an agent until its model answers without tool calls",
		ArgsUsage: "[PROMPT]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "the agent file (YAML); an agent that exists (--id) runs without it, with the one it was made with"},
			&cli.StringFlag{Name: "id", Usage: "the agent's id (default: the agent's name and a random suffix)"},
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the directory the tools work in (default: the agent file's workspace)"},
			&cli.BoolFlag{Name: "fresh", Usage: "start an existing agent over from the agent file (-f), forgetting its conversation"},
			&cli.StringFlag{Name: "tenant", Usage: "identity label: the tenant the agent works for"},
			&cli.StringFlag{Name: "principal", Usage: "identity label: who started the agent"},
			&cli.StringFlag{Name: "template", Usage: "identity label: the template the agent was made from"},
			&cli.StringFlag{Name: "correlation", Usage: "identity label: an id that ties the agent to outside work"},
			&cli.StringFlag{Name: "model", Usage: "use this model instead of the agent file's: PROVIDER:NAME, e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, script:turns.yaml"},
			newStoreFlag(), newCacheFlag(), newEngineFlag(), newJSONFlag(), newAutoDenyFlag(), newWorkspaceLimitFlag(),
		},
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	if c.String("file") == "" && c.String("id") == "" {
		return withCode(exitUsage, fmt.Errorf("run needs an agent file, or the id of an agent to continue: cairn run -f AGENT_FILE [PROMPT], cairn run --id AGENT PROMPT"))
	}
	af, err := agentFileFlag(c)
	if err != nil {
		return err
	}
	opts := host.RunOptions{Agent: af, ID: c.String("id"), Workspace: c.String("workspace"),
		Fresh: c.Bool("fresh"), Prompt: strings.Join(c.Args().Slice(), " "),
		Labels: checkpoint.Labels{Tenant: c.String("tenant"), Principal: c.String("principal"),
			Template: c.String("template"), Correlation: c.String("correlation")}}
	if opts.Prompt == "" && af != nil {
		opts.Prompt = af.Prompt
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.close()
	opts.Model = s.model
	r := newRenderer(c.App.Writer, c.App.ErrWriter, c.Bool(jsonFlag))
	r.busy = newProgress(c.App.ErrWriter, c.Bool(jsonFlag))
	r.busy.watchCompiling(s.eng.Compiling)
	defer r.busy.close()
	opts.OnEvent = r.event
	opts.Approver, opts.AutoDeny = terminalApprover(c.App.Reader, c.App.ErrWriter), c.Bool(autoDenyFlag)
	res, err := s.eng.Run(s.ctx, opts)
	if af == nil && errors.Is(err, host.ErrNoAgentFile) {
		// The library's message names its functions; say what the command takes.
		return withCode(exitUsage, noAgentFile(s.eng.Store(), opts))
	}
	if err != nil {
		return runError(err)
	}
	return statusError(res)
}

// noAgentFile says why a run without -f cannot start, and what to give:
// --fresh makes even an agent that exists anew from an agent file, and an
// agent that does not exist needs one to be made.
func noAgentFile(store checkpoint.Store, opts host.RunOptions) error {
	id := opts.ID
	if opts.Fresh && store.Exists(id) {
		return fmt.Errorf("agent %q exists, and --fresh starts it over from an agent file, forgetting its conversation: "+
			"give the file (cairn run -f AGENT_FILE --id %s --fresh [PROMPT]), or leave out --fresh to go on with the agent as it is (cairn run --id %s PROMPT)",
			id, id, id)
	}
	return fmt.Errorf("agent %q does not exist: give its agent file to make it: cairn run -f AGENT_FILE --id %s [PROMPT]", id, id)
}

// agentFileFlag loads -f's agent file; nil without -f, for an agent that
// exists and runs with the agent file it was made with.
func agentFileFlag(c *cli.Context) (*host.AgentFile, error) {
	if c.String("file") == "" {
		return nil, nil
	}
	af, err := host.LoadAgentFile(c.String("file"))
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	return af, nil
}

// statusError maps how a run ended to the command's exit code.
func statusError(res *host.Result) error {
	switch res.Status {
	case host.StatusDone:
		return nil
	case host.StatusPaused:
		if strings.Contains(res.Reason, "`cairn ") {
			// The reason says how to go on, and a plain resume would stop
			// at once: a sub-agent stopped the tree (a limit of its own is
			// raised on it first), an MCP client drives the agent, or the
			// agent has no conversation to ask the model about yet.
			return withCode(exitPaused, fmt.Errorf("agent %s paused: %s", res.Agent, res.Reason))
		}
		if flag, ok := limitFlag(res.Reason); ok {
			// A plain resume would stop at the same limit at once.
			return withCode(exitPaused, fmt.Errorf("agent %s paused: %s: `cairn resume %s %s N`", res.Agent, res.Reason, res.Agent, flag))
		}
		return withCode(exitPaused, fmt.Errorf("agent %s paused: %s; continue with `cairn resume %s`", res.Agent, res.Reason, res.Agent))
	case host.StatusAwaitingApproval:
		if res.StoppedBySubAgent() {
			// A call of a sub-agent waits: the reason says where to decide.
			return withCode(exitApproval, fmt.Errorf("agent %s waits: %s", res.Agent, res.Reason))
		}
		call := res.AwaitingCall()
		return withCode(exitApproval, fmt.Errorf("agent %s is %s; decide with `cairn approve %s %s` or `cairn deny %s %s --reason TEXT`, then `cairn resume %s`",
			res.Agent, res.Reason, res.Agent, call, res.Agent, call, res.Agent))
	default:
		if strings.HasPrefix(res.Reason, modelFailure) {
			// The model's server refused the request or its answer: the
			// agent stays at its last round, and a resume asks again.
			return withCode(exitFailed, fmt.Errorf("agent %s failed: %s; once that is fixed, `cairn resume %s` asks the model again (with --model PROVIDER:NAME, another model)",
				res.Agent, res.Reason, res.Agent))
		}
		return withCode(exitFailed, fmt.Errorf("agent %s failed: %s", res.Agent, res.Reason))
	}
}

// modelFailure begins the reason of a run that failed because the model's
// server refused its request, or gave an answer past cairn's bounds.
const modelFailure = "model: "

// limitFlag is the flag that raises the limit a run's reason says it
// reached ("…; resume with --max-rounds to allow more").
func limitFlag(reason string) (string, bool) {
	_, rest, ok := strings.Cut(reason, "; resume with --max-")
	if !ok {
		return "", false
	}
	name, _, ok := strings.Cut(rest, " ")
	return "--max-" + name, ok
}
