package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/host/workflow"
)

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "bring an agent back at its last committed round, say what was in flight, and continue",
		ArgsUsage: "AGENT",
		Flags: slices.Concat([]cli.Flag{
			&cli.StringFlag{Name: "strategy", Value: "seal",
				Usage: "seal: keep finished calls, seal the ones in flight, continue; replay: drop the interrupted round and ask the model again; manual: report and stop"},
			&cli.BoolFlag{Name: "upgrade", Usage: "use the agent file (and its modules) as they are on disk now, not as the agent started with"},
			&cli.StringFlag{Name: "model", Usage: "continue with this model: PROVIDER:NAME"},
		}, limitFlags("the agent's"), []cli.Flag{
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"},
				Usage: "the agent's workspace on this node: an empty or missing directory receives the store's copy at the boundary; one that holds a workspace must match it"},
			&cli.BoolFlag{Name: "take-store-workspace", Usage: "with --workspace: make the directory the store's copy where they differ (files replaced, extra files removed)"},
			&cli.BoolFlag{Name: "steal", Usage: "take the agent at once from a holder whose lease has not expired (PostgreSQL only); the holder is fenced and commits nothing more"},
			newStoreFlag(), newCacheFlag(), newEngineFlag(), newJSONFlag(), newAutoDenyFlag(), newWorkspaceLimitFlag(),
		}),
		Action: resumeAction,
	}
}

func resumeAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn resume [--strategy seal|replay|manual] [--workspace DIR] [--steal] AGENT"))
	}
	strategy, err := host.ParseStrategy(c.String("strategy"))
	if err != nil {
		return withCode(exitUsage, err)
	}
	if strategy == host.StrategyManual && c.Bool("upgrade") {
		return withCode(exitUsage, fmt.Errorf("--strategy manual reports and changes nothing, and --upgrade would store the agent file as it is now: give one of them"))
	}
	limits, err := limitsOf(c)
	if err != nil {
		return err
	}
	opts := host.ResumeOptions{ID: c.Args().First(), Strategy: strategy, Upgrade: c.Bool("upgrade"), Limits: limits,
		Workspace: c.String("workspace"), TakeStoreWorkspace: c.Bool("take-store-workspace"), Steal: c.Bool("steal")}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.close()
	if err := stepMovedAlone(c, s, opts); err != nil {
		return err
	}
	opts.Model = s.model
	r := newRenderer(c.App.Writer, c.App.ErrWriter, c.Bool(jsonFlag))
	r.busy = newProgress(c.App.ErrWriter, c.Bool(jsonFlag))
	r.busy.watchCompiling(s.eng.Compiling)
	defer r.busy.close()
	opts.OnEvent = r.event
	opts.Approver, opts.AutoDeny = terminalApprover(c.App.Reader, c.App.ErrWriter), c.Bool(autoDenyFlag)
	res, err := s.eng.Resume(s.ctx, opts)
	if err != nil {
		return runError(agentsBeginning(s.eng.Store(), opts.ID, workflowNotAgent(s.eng.Store(), opts.ID, "resume", err)))
	}
	stepUnrecorded(c, s, res.Agent)
	treeUnfinished(c, s, res)
	return statusError(res)
}

// treeUnfinished says, of a sub-agent resumed by itself that ended done
// or failed while its parent has not taken its answer, that its parent
// takes it only when the tree is resumed, and with what command: the
// child's exit 0 would otherwise read as the tree's. A workflow's step,
// or a sub-agent under one, is left to stepUnrecorded.
func treeUnfinished(c *cli.Context, s *session, res *host.Result) {
	if res.Status != host.StatusDone && res.Status != host.StatusFailed {
		return
	}
	store := s.eng.Store()
	in, err := host.Inspect(c.Context, store, res.Agent)
	if err != nil || !host.Unanswered(c.Context, store, res.Agent) {
		return
	}
	if _, step := workflow.OfAgent(c.Context, store, res.Agent); step {
		return
	}
	root := host.RootOf(c.Context, store, res.Agent)
	top, err := host.Inspect(c.Context, store, root)
	if err != nil || root == res.Agent || top.Summary.Status == checkpoint.StatusDone {
		return
	}
	fmt.Fprintf(c.App.ErrWriter, "agent %s is a sub-agent of %s, whose tree (top-level agent %s, %s) has not taken its answer: "+
		"`cairn resume %s` does, and goes on with the tree\n", res.Agent, in.State.Parent.Agent, root, top.Summary.Status, root)
}

// stepMovedAlone refuses, changing nothing, to give a workflow's step
// agent a workspace of its own: the workflow's other steps work in the
// workspace it started with, and would not see what the step changes in
// another directory. The workflow keeps its workspace through a resume.
func stepMovedAlone(c *cli.Context, s *session, opts host.ResumeOptions) error {
	if opts.Workspace == "" {
		return nil
	}
	id, ok := workflow.OfAgent(c.Context, s.eng.Store(), opts.ID)
	if !ok {
		return nil
	}
	return withCode(exitUsage, fmt.Errorf("resume agent %q in %s: it runs a step of workflow %s, whose steps keep the workspaces the workflow started with, "+
		"and moved alone it would split the workflow's files; nothing was changed: continue it with `cairn workflow resume %s`", opts.ID, opts.Workspace, id, id))
}

// stepUnrecorded says, of an agent that runs a step of a workflow that
// has not recorded the step, that the workflow's resume records it and
// goes on with the steps after it: resumed by itself, the agent does
// neither.
func stepUnrecorded(c *cli.Context, s *session, agent string) {
	store := s.eng.Store()
	id, ok := workflow.OfAgent(c.Context, store, agent)
	if !ok {
		return
	}
	step := strings.TrimPrefix(host.RootOf(c.Context, store, agent), id+".")
	if ws, isWS := store.(checkpoint.Workflows); isWS {
		if rec, err := ws.Workflow(id); err == nil {
			if _, done := rec.Step(step); done {
				return
			}
		}
	}
	fmt.Fprintf(c.App.ErrWriter, "agent %s runs step %s of workflow %s, which has not recorded it: `cairn workflow resume %s` does, and goes on with the steps after it\n",
		agent, step, id, id)
}

// limitFlags are --max-rounds, --max-tokens, --max-cost and --max-time,
// which raise whose limits for a run; left out, a limit is the agent
// file's.
func limitFlags(whose string) []cli.Flag {
	const unchanged = "the agent file's"
	return []cli.Flag{
		&cli.GenericFlag{Name: "max-rounds", Value: &wholeValue{}, Usage: "raise " + whose + " max_rounds for this run", DefaultText: unchanged},
		&cli.GenericFlag{Name: "max-tokens", Value: &wholeValue{}, Usage: "raise " + whose + " max_tokens for this run", DefaultText: unchanged},
		&cli.Float64Flag{Name: "max-cost", Usage: "raise " + whose + " max_cost (US dollars) for this run", DefaultText: unchanged},
		&cli.GenericFlag{Name: "max-time", Value: &durationValue{}, Usage: whose + " max_time for this run", DefaultText: unchanged},
	}
}

// limitsOf reads the limitFlags; a negative one, one given as 0 (which
// would raise nothing: a flag raises a limit for the run, it does not take
// one away), or a --max-cost that is not a number of dollars, is refused.
func limitsOf(c *cli.Context) (host.RunLimits, error) {
	for _, name := range []string{"max-rounds", "max-tokens", "max-cost", "max-time"} {
		if c.Float64(name) < 0 || c.Int(name) < 0 || c.Int64(name) < 0 || c.Duration(name) < 0 {
			return host.RunLimits{}, withCode(exitUsage, fmt.Errorf("%s: --%s cannot be negative", c.Command.Name, name))
		}
		if c.IsSet(name) && c.Float64(name) == 0 && c.Int(name) == 0 && c.Int64(name) == 0 && c.Duration(name) == 0 {
			return host.RunLimits{}, withCode(exitUsage, fmt.Errorf("%s: --%s 0 raises no limit: give one above 0", c.Command.Name, name))
		}
	}
	if v := c.Float64("max-cost"); !model.Dollars(v) {
		return host.RunLimits{}, withCode(exitUsage, fmt.Errorf("%s: --max-cost %v: want US dollars, 0 or more", c.Command.Name, v))
	}
	return host.RunLimits{MaxRounds: c.Int("max-rounds"), MaxTokens: c.Int64("max-tokens"),
		MaxCost: c.Float64("max-cost"), MaxTime: host.Duration(c.Duration("max-time"))}, nil
}
