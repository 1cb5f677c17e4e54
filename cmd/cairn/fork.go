package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:      "snapshot",
		Usage:     "bookmark an agent's last committed round and a copy of its workspace, to fork from later",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{storeFlag, cacheFlag,
			&cli.StringFlag{Name: "label", Usage: "the bookmark's name (default: round-N)"}},
		Action: snapshotAction,
	}
}

func snapshotAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, fmt.Errorf("usage: cairn snapshot [--label L] AGENT"))
	}
	eng, err := newEngine(c)
	if err != nil {
		return err
	}
	defer eng.Close(context.Background())
	b, err := eng.Snapshot(c.Context, c.Args().First(), c.String("label"))
	if err != nil {
		return runError(err)
	}
	fmt.Fprintf(c.App.Writer, "bookmarked agent %s at round %d as %s\n", c.Args().First(), b.Round, b.Label)
	return nil
}

func forkCommand() *cli.Command {
	return &cli.Command{
		Name:      "fork",
		Usage:     "start a new agent from another's bookmark, any past round or last round, with a copy of its workspace then",
		ArgsUsage: "AGENT",
		Flags: []cli.Flag{storeFlag, cacheFlag,
			&cli.StringFlag{Name: "from", Usage: "a bookmark's label (default: the last committed round, workspace as it is now)"},
			&cli.IntFlag{Name: "at-round", Usage: "fork the boundary of round N (0: as the agent started), with the workspace as it was then, from the store's copy"},
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
		return forkError(err)
	}
	fmt.Fprintf(c.App.Writer, "forked %s at round %d as %s, workspace %s\n", st.From, st.Round, st.Agent, st.Workspace)
	return nil
}

// forkError is a failed fork's error with its exit code.
func forkError(err error) error {
	if errors.Is(err, checkpoint.ErrNoPast) || errors.Is(err, host.ErrNoBookmark) {
		return withCode(exitUsage, err) // it names a round or bookmark the agent lacks
	}
	return runError(err)
}

// forkAt forks as opts says. A fork at a past round, or from a bookmark,
// reads the agent's pasts or bookmarks without its lock, and then the
// blobs they name: `cairn gc` run meanwhile, with --keep-rounds, replaces
// the pasts and removes the blobs that only the rounds it removed used
// (their files, a whole workspace older than the oldest kept), and with
// --keep-bookmarks removes the oldest bookmarks and the blobs only they
// used (their workspaces). A blob found missing is checked against the
// pasts or bookmarks as they are now: a round or bookmark gc removed is
// refused as such, naming what is left, and one it kept is forked again
// from them. A failed fork leaves nothing (Engine.Fork), so it can be
// tried again.
func forkAt(ctx context.Context, eng *host.Engine, opts host.ForkOptions) (*host.Forked, error) {
	st, err := forkTrying(ctx, eng, opts)
	if err != nil && opts.Past && errors.Is(err, checkpoint.ErrNotFound) && eng.Store().Exists(opts.ID) {
		// A blob the round's workspace is made from is gone (removed by
		// hand, a damaged disk): the store is damaged, not the command
		// line wrong, which ErrNotFound's exit code would say.
		return nil, fmt.Errorf("%v; the store has lost a file that the workspace of round %d is made from, so it cannot be rebuilt: "+
			"restore the store's blobs from a backup, or fork at another round", err, opts.AtRound)
	}
	if err != nil && opts.From != "" && errors.Is(err, checkpoint.ErrNotFound) && eng.Store().Exists(opts.ID) {
		// The bookmark is there (forkTrying read it again), its workspace
		// is not: the store is damaged, as above.
		return nil, fmt.Errorf("%v; the store has lost the workspace of bookmark %q, so it cannot be forked from: "+
			"restore the store's blobs from a backup, or fork from another bookmark (cairn show %s lists them)", err, opts.From, opts.ID)
	}
	return st, err
}

// forkTrying is forkAt, trying again as forkAt says.
func forkTrying(ctx context.Context, eng *host.Engine, opts host.ForkOptions) (*host.Forked, error) {
	for tries := 1; ; tries++ {
		st, err := eng.Fork(ctx, opts)
		if err == nil || !errors.Is(err, checkpoint.ErrNotFound) || tries == 3 {
			return st, err
		}
		again := false
		switch {
		case opts.Past:
			again, err = roundKept(eng, opts, err)
		case opts.From != "":
			again, err = bookmarkKept(eng, opts, err)
		}
		if !again {
			return nil, err
		}
	}
}

// roundKept says whether the round a fork at a past round failed to read
// (err) is kept in the pasts as they are now, to try again; else the
// error to fail with: the round's refusal when gc removed it, or err.
func roundKept(eng *host.Engine, opts host.ForkOptions, err error) (bool, error) {
	tl, ok := eng.Store().(checkpoint.Timeline)
	if !ok {
		return false, err
	}
	pasts, perr := tl.Pasts(opts.ID)
	if perr != nil || len(pasts) == 0 {
		return false, err
	}
	if _, perr := checkpoint.PastAt(pasts, opts.ID, opts.AtRound); perr != nil {
		if pasts[0].Trimmed && opts.AtRound < pasts[0].Round {
			return false, fmt.Errorf("fork: %w", perr) // removed while the fork read it
		}
		return false, err
	}
	return true, nil
}

// bookmarkKept says whether the bookmark a fork failed to read (err) is
// still there, to try again; else the error to fail with: the bookmark's
// refusal, naming those left, when it was removed while the fork read it.
func bookmarkKept(eng *host.Engine, opts host.ForkOptions, err error) (bool, error) {
	marks, merr := eng.Store().Bookmarks(opts.ID)
	if merr != nil {
		return false, err
	}
	left := make([]string, 0, len(marks))
	for _, b := range marks {
		if b.Label == opts.From {
			return true, nil
		}
		left = append(left, b.Label)
	}
	names := "none"
	if len(left) > 0 {
		names = strings.Join(left, ", ")
	}
	return false, fmt.Errorf("fork: agent %q: %w %q: it was removed while the fork read it, as `cairn gc --keep-bookmarks` removes the oldest; "+
		"bookmarks left: %s (cairn show %s lists them)", opts.ID, host.ErrNoBookmark, opts.From, names, opts.ID)
}
