package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:      "snapshot",
		Usage:     "bookmark an agent's last committed round and a copy of its workspace, to fork from later",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{newStoreFlag(), newCacheFlag(),
			&cli.StringFlag{Name: "label", Usage: "the bookmark's name (default: round-N)"}},
		Action: snapshotAction,
	}
}

func snapshotAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn snapshot [--label L] AGENT"))
	}
	if l := c.String("label"); l != "" {
		if err := checkpoint.CheckLabel(l); err != nil {
			return withCode(exitUsage, fmt.Errorf("snapshot: %w", err))
		}
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	b, err := eng.Snapshot(c.Context, c.Args().First(), c.String("label"))
	if err != nil {
		return runError(agentsBeginning(eng.Store(), c.Args().First(), err))
	}
	fmt.Fprintf(c.App.Writer, "bookmarked agent %s at round %d as %s\n", c.Args().First(), b.Round, b.Label)
	return nil
}

func forkCommand() *cli.Command {
	return &cli.Command{
		Name:      "fork",
		Usage:     "start a new agent from another's bookmark, any past round or last round, with a copy of its workspace then",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{newStoreFlag(), newCacheFlag(),
			&cli.StringFlag{Name: "from", Usage: "a bookmark's label (default: the last committed round, workspace as it is now)"},
			&cli.IntFlag{Name: "at-round", Usage: "fork the boundary of round N (0: as the agent started), with the workspace as it was then, from the store's copy",
				DefaultText: "the last committed round, or the bookmark --from names"},
			&cli.StringFlag{Name: "as", Usage: "the new agent's id"},
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the new agent's workspace (default: beside the original's, named after the new agent)"}},
		Action: forkAction,
	}
}

func forkAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn fork [--from LABEL | --at-round N] [--as NEW] [--workspace DIR] AGENT"))
	}
	if c.IsSet("at-round") && c.IsSet("from") {
		return withCode(exitUsage, fmt.Errorf("fork: give --from or --at-round, not both"))
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	st, err := forkAt(c.Context, eng, host.ForkOptions{ID: c.Args().First(), From: c.String("from"), As: c.String("as"),
		Workspace: c.String("workspace"), Past: c.IsSet("at-round"), AtRound: c.Int("at-round")})
	if err != nil {
		return forkError(agentsBeginning(eng.Store(), c.Args().First(), err))
	}
	fmt.Fprintf(c.App.Writer, "forked %s at round %d as %s, workspace %s\n", st.From, st.Round, st.Agent, st.Workspace)
	return nil
}

// forkError is a failed fork's error with its exit code.
func forkError(err error) error {
	if errors.Is(err, checkpoint.ErrNoPast) || errors.Is(err, host.ErrNoBookmark) {
		return withCode(exitUsage, err) // it names a round or bookmark the agent lacks
	}
	if errors.Is(err, checkpoint.ErrExists) {
		return withCode(exitUsage, fmt.Errorf("%w: give another id with --as, or leave --as out for a new one", err))
	}
	return runError(err)
}

// forkAt forks as opts says (Engine.Fork, which forks again, or refuses
// as removed, a round or bookmark whose blob `cairn gc` removed while it
// read it), saying of a blob missing still that the store lost it.
func forkAt(ctx context.Context, eng *host.Engine, opts host.ForkOptions) (*host.Forked, error) {
	st, err := eng.Fork(ctx, opts)
	if err != nil && opts.Past && errors.Is(err, checkpoint.ErrNotFound) && eng.Store().Exists(opts.ID) {
		// A blob the round's workspace is made from is gone (removed by
		// hand, a damaged disk): the store is damaged, not the command
		// line wrong, which ErrNotFound's exit code would say.
		return nil, fmt.Errorf("%v; the store has lost a file that the workspace of round %d is made from, so it cannot be rebuilt: "+
			"restore the store's blobs from a backup, or fork at another round", err, opts.AtRound)
	}
	if err != nil && opts.From != "" && errors.Is(err, checkpoint.ErrNotFound) && eng.Store().Exists(opts.ID) {
		// The bookmark is there (Fork read it again), its workspace is
		// not: the store is damaged, as above.
		return nil, fmt.Errorf("%v; the store has lost the workspace of bookmark %q, so it cannot be forked from: "+
			"restore the store's blobs from a backup, or fork from another bookmark (cairn show %s lists them)", err, opts.From, opts.ID)
	}
	return st, err
}
