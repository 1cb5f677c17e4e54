package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "remove old snapshots and journals, leftover temp files, old bookmarks and unused blobs; never an agent's last boundary",
		Flags: []cli.Flag{storeFlag, listJSONFlag,
			&cli.IntFlag{Name: "keep-snapshots", Value: 1, Usage: "snapshots (each with its journal) to keep per agent"},
			&cli.IntFlag{Name: "keep-bookmarks", Usage: "bookmarks to keep per agent, newest first; 0 keeps all", DefaultText: "all"},
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed, remove nothing"}},
		Action: gcAction,
	}
}

func gcAction(c *cli.Context) error {
	for _, name := range []string{"keep-snapshots", "keep-bookmarks"} {
		if c.Int(name) < 0 {
			return withCode(exitUsage, fmt.Errorf("gc: --%s cannot be negative", name))
		}
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	busy := newProgress(c.App.ErrWriter, c.Bool(jsonFlag.Name))
	busy.set("collecting: reading every agent's snapshots, journals and bookmarks")
	got, err := host.Collect(c.Context, store, checkpoint.Retention{Snapshots: c.Int("keep-snapshots"),
		Bookmarks: c.Int("keep-bookmarks"), DryRun: c.Bool("dry-run")})
	busy.close()
	if err != nil {
		return err
	}
	if c.Bool(jsonFlag.Name) {
		if err := writeJSON(c, got); err != nil {
			return err
		}
		return unreadableError(c, got)
	}
	verb := "removed"
	if c.Bool("dry-run") {
		verb = "would remove"
	}
	for _, f := range got.Files {
		fmt.Fprintf(c.App.Writer, "%s %s\n", verb, f)
	}
	for _, a := range got.Skipped {
		fmt.Fprintf(c.App.Writer, "skipped agent %s: a process runs it\n", a)
	}
	fmt.Fprintf(c.App.Writer, "%s %d files, %d bytes\n", verb, len(got.Files), got.Bytes)
	return unreadableError(c, got)
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
