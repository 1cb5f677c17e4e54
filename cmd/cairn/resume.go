package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/host"
)

func resumeCommand() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "bring an agent back at its last committed round, say what was in flight, and continue",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "strategy", Value: "seal",
				Usage: "seal: keep finished calls, seal the ones in flight, continue; replay: drop the interrupted round and ask the model again; manual: report and stop"},
			&cli.BoolFlag{Name: "upgrade", Usage: "use the agent file (and its modules) as they are on disk now, not as the agent started with"},
			&cli.StringFlag{Name: "model", Usage: "continue with this model: PROVIDER:NAME"},
			&cli.IntFlag{Name: "max-rounds", Usage: "raise the agent's max_rounds for this run"},
			&cli.Int64Flag{Name: "max-tokens", Usage: "raise the agent's max_tokens for this run"},
			&cli.Float64Flag{Name: "max-cost", Usage: "raise the agent's max_cost (US dollars) for this run"},
			&cli.DurationFlag{Name: "max-time", Usage: "the agent's max_time for this run"},
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"},
				Usage: "the agent's workspace on this node: an empty or missing directory receives the store's copy at the boundary; one that holds a workspace must match it"},
			&cli.BoolFlag{Name: "take-store-workspace", Usage: "with --workspace: make the directory the store's copy where they differ (files replaced, extra files removed)"},
			&cli.BoolFlag{Name: "steal", Usage: "take the agent at once from a holder whose lease has not expired (PostgreSQL only); the holder is fenced and commits nothing more"},
			storeFlag, cacheFlag, engineFlag, jsonFlag, autoDenyFlag, newWorkspaceLimitFlag(),
		},
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
	for _, name := range []string{"max-rounds", "max-tokens", "max-cost", "max-time"} {
		if c.Float64(name) < 0 || c.Int(name) < 0 || c.Int64(name) < 0 || c.Duration(name) < 0 {
			return withCode(exitUsage, fmt.Errorf("resume: --%s cannot be negative", name))
		}
	}
	opts := host.ResumeOptions{ID: c.Args().First(), Strategy: strategy, Upgrade: c.Bool("upgrade"),
		Limits: host.RunLimits{MaxRounds: c.Int("max-rounds"), MaxTokens: c.Int64("max-tokens"),
			MaxCost: c.Float64("max-cost"), MaxTime: host.Duration(c.Duration("max-time"))},
		Workspace: c.String("workspace"), TakeStoreWorkspace: c.Bool("take-store-workspace"), Steal: c.Bool("steal")}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.close()
	opts.Model = s.model
	r := newRenderer(c.App.Writer, c.App.ErrWriter, c.Bool(jsonFlag.Name))
	r.busy = newProgress(c.App.ErrWriter, c.Bool(jsonFlag.Name))
	r.busy.watchCompiling(s.eng.Compiling)
	defer r.busy.close()
	opts.OnEvent = r.event
	opts.Approver, opts.AutoDeny = terminalApprover(c.App.Reader, c.App.ErrWriter), c.Bool(autoDenyFlag.Name)
	res, err := s.eng.Resume(s.ctx, opts)
	if err != nil {
		return runError(err)
	}
	return statusError(res)
}
