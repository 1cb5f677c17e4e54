package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/plural"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "remove old snapshots and journals, leftover temp files, old bookmarks, old rounds' events and pasts (--keep-rounds) and unused blobs; never an agent's last boundary",
		Flags: []cli.Flag{newStoreFlag(), newListJSONFlag(),
			&cli.IntFlag{Name: "keep-snapshots", Value: 1, Usage: "snapshots (each with its journal) to keep per agent"},
			&cli.IntFlag{Name: "keep-bookmarks", Usage: "bookmarks to keep per agent, newest first; 0 keeps all", DefaultText: "all"},
			&cli.IntFlag{Name: "keep-rounds", Usage: "rounds whose events and pasts (to fork at, diff) to keep per agent, the last ones; " +
				"0 keeps all (the journal and snapshots keep every message either way)", DefaultText: "all"},
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed, remove nothing"}},
		Action: gcAction,
	}
}

func gcAction(c *cli.Context) error {
	for _, name := range []string{"keep-snapshots", "keep-bookmarks", "keep-rounds"} {
		if c.Int(name) < 0 {
			return withCode(exitUsage, fmt.Errorf("gc: --%s cannot be negative", name))
		}
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	busy := newProgress(c.App.ErrWriter, c.Bool(jsonFlag))
	busy.set("collecting: reading every agent's snapshots, journals and bookmarks")
	got, err := host.Collect(c.Context, store, checkpoint.Retention{Snapshots: c.Int("keep-snapshots"),
		Bookmarks: c.Int("keep-bookmarks"), Rounds: c.Int("keep-rounds"), DryRun: c.Bool("dry-run")})
	busy.close()
	if err != nil {
		return err
	}
	if c.Bool(jsonFlag) {
		if err := writeJSON(c, got); err != nil {
			return err
		}
		return collectedError(c, got)
	}
	verb := "removed"
	if c.Bool("dry-run") {
		verb = "would remove"
	}
	for _, f := range got.Files {
		fmt.Fprintf(c.App.Writer, "%s %s\n", verb, f)
	}
	for _, t := range got.Trimmed {
		fmt.Fprintf(c.App.Writer, "%s the rounds before %d from %s, %s\n", verb, t.Round, t.Path, plural.Count(t.Bytes, "byte"))
	}
	for _, f := range got.Fills {
		fmt.Fprintf(c.App.Writer, "%s %s, what a fork or resume killed while it filled a workspace left\n", verb, f)
	}
	for _, d := range got.Made {
		fmt.Fprintf(c.App.Writer, "%s %s, an empty directory a fork or resume killed before it filled a workspace made\n", verb, d)
	}
	for _, u := range got.Unmade {
		fmt.Fprintf(c.App.Writer, "left %s: the workspace of a fork of agent %s as %s, killed before it was done: "+
			"run it again (%s) to finish it, or remove the directory\n", u.Dir, u.From, u.Agent, forkAgain(u))
	}
	for _, k := range got.Kept {
		switch {
		case k.MovedTo != "":
			move := "moved"
			if c.Bool("dry-run") {
				move = "would move"
			}
			fmt.Fprintf(c.App.Writer, "%s %s to %s, the kept changes of agent %s (what diff and undo read) that an older cairn kept "+
				"in the temporary directory\n", move, k.Dir, k.MovedTo, k.Agent)
		case k.Gone:
			fmt.Fprintf(c.App.Writer, "%s %s, what this node kept of agent %s (its kept changes for diff and undo, its staging), "+
				"which the store no longer has\n", verb, k.Dir, k.Agent)
		default:
			fmt.Fprintf(c.App.Writer, "%s %s, an older copy of the kept changes of agent %s, which the state directory holds\n", verb, k.Dir, k.Agent)
		}
	}
	for _, a := range got.Skipped {
		fmt.Fprintf(c.App.Writer, "skipped agent %s: a process runs it\n", a)
	}
	fills := ""
	if len(got.Fills) > 0 {
		fills = " and " + plural.Count(len(got.Fills), "fill directory", "fill directories")
	}
	if len(got.Trimmed) > 0 {
		trim := "trimmed"
		if c.Bool("dry-run") {
			trim = "would trim"
		}
		fmt.Fprintf(c.App.Writer, "%s %s%s, %s %d, %s\n", verb, plural.Count(len(got.Files), "file"), fills, trim, len(got.Trimmed), plural.Count(got.Bytes, "byte"))
	} else {
		fmt.Fprintf(c.App.Writer, "%s %s%s, %s\n", verb, plural.Count(len(got.Files), "file"), fills, plural.Count(got.Bytes, "byte"))
	}
	return collectedError(c, got)
}

// collectedError fails the command when gc left an agent unread
// (unreadableError) or could not trim its old rounds, saying which on
// stderr.
func collectedError(c *cli.Context, got *checkpoint.Collected) error {
	if err := unremovedError(c, got); err != nil {
		if err2 := unreadableError(c, got); err2 != nil {
			return err2
		}
		return err
	}
	var ids []string
	for _, a := range got.Untrimmed {
		fmt.Fprintf(c.App.ErrWriter, "cairn: warning: could not trim the old rounds of agent %s: %s\n", a.Agent, terminalLine(a.Reason))
		ids = append(ids, a.Agent)
	}
	if err := unreadableError(c, got); err != nil || len(ids) == 0 {
		return err
	}
	if pgstore.IsConnString(storeDir(c)) {
		return withCode(exitFailed, fmt.Errorf("gc could not trim the old rounds of agent %s (%s); the rest was collected, "+
			"and its rows are as they were (the trim is one transaction): run `cairn gc --keep-rounds` again, once the database answers "+
			"if it did not", strings.Join(ids, ", "), terminalLine(got.Untrimmed[0].Reason)))
	}
	return withCode(exitFailed, fmt.Errorf("gc could not trim the old rounds of agent %s (%s); the rest was collected, "+
		"and each of its files is as it was or trimmed, whole: the rounds kept are written to a new file beside the old one "+
		"before it is replaced, so make room for it (this gc may have made some) and run `cairn gc --keep-rounds` again",
		strings.Join(ids, ", "), terminalLine(got.Untrimmed[0].Reason)))
}

// unreadableError says on stderr which agents gc left untouched because it
// could not lock or read them, and why, and fails the command: the other
// agents were collected, but no blob was, and a damaged agent needs a
// person, which a scheduled gc that exits 0 would never call for.
func unreadableError(c *cli.Context, got *checkpoint.Collected) error {
	if len(got.Unreadable) == 0 {
		return nil
	}
	var ids []string
	for _, a := range got.Unreadable {
		fmt.Fprintf(c.App.ErrWriter, "cairn: warning: left agent %s untouched: %s\n", a.Agent, terminalLine(a.Reason))
		ids = append(ids, a.Agent)
	}
	fmt.Fprintf(c.App.ErrWriter, "cairn: warning: kept every blob: %s\n", got.BlobsKept)
	advice := "if its files may not be opened or written here (a read-only store, another user's files), run gc where they may; " +
		"if a newer cairn wrote it, upgrade cairn; if it is damaged, restore its directory from a backup, or move it out of the store"
	if pgstore.IsConnString(storeDir(c)) {
		advice = "if the database was unavailable, run gc when it answers; if a newer cairn wrote the agent, upgrade cairn; " +
			"if it is damaged, do what its error says (restore a backup of the database, or give the agent up by deleting its rows)"
	}
	return withCode(exitFailed, fmt.Errorf("gc could not lock or read agent %s (%s), so it removed no blob (it collected the other agents): "+
		"%s; then run `cairn gc` again", strings.Join(ids, ", "), terminalLine(got.Unreadable[0].Reason), advice))
}

// unremovedError says on stderr which directories outside the store gc
// found to remove (what killed fills left) and could not, and why, and
// fails the command: each is left, and the next gc tries again, once a
// person has made it removable (a file system mounted read-only, say),
// which a scheduled gc that exits 0 would never call for. A dry run says
// what it would find so.
func unremovedError(c *cli.Context, got *checkpoint.Collected) error {
	if len(got.Unremoved) == 0 {
		return nil
	}
	verb := "could not remove"
	if c.Bool("dry-run") {
		verb = "would not be able to remove"
	}
	var dirs []string
	for _, u := range got.Unremoved {
		fmt.Fprintf(c.App.ErrWriter, "cairn: warning: %s %s: %s\n", verb, u.Dir, terminalLine(u.Reason))
		dirs = append(dirs, u.Dir)
	}
	return withCode(exitFailed, fmt.Errorf("gc %s %s, which it found to remove (%s): make it removable (a file system "+
		"mounted read-only, a directory cairn may not write), and run `cairn gc` again, which removes it; the rest was collected",
		verb, strings.Join(dirs, ", "), terminalLine(got.Unremoved[0].Reason)))
}

// forkAgain is the command that runs again the fork u, killed before it
// was done.
func forkAgain(u checkpoint.UnmadeFork) string {
	from := ""
	switch {
	case u.Past:
		from = fmt.Sprintf(" --at-round %d", u.Round)
	case u.Label != "":
		from = " --from " + u.Label
	}
	return fmt.Sprintf("cairn fork%s --as %s -w %s %s", from, u.Agent, u.Dir, u.From)
}
