package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "remove old snapshots and journals, leftover temp files, old bookmarks and unused blobs; never an agent's last boundary",
		Flags: []cli.Flag{storeFlag, jsonFlag,
			&cli.IntFlag{Name: "keep-snapshots", Value: 1, Usage: "snapshots (each with its journal) to keep per agent"},
			&cli.IntFlag{Name: "keep-bookmarks", Usage: "bookmarks to keep per agent, newest first (default: all)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed, remove nothing"}},
		Action: gcAction,
	}
}

func gcAction(c *cli.Context) error {
	store, err := openStore(c)
	if err != nil {
		return err
	}
	got, err := host.Collect(store, checkpoint.Retention{Snapshots: c.Int("keep-snapshots"),
		Bookmarks: c.Int("keep-bookmarks"), DryRun: c.Bool("dry-run")})
	if err != nil {
		return err
	}
	if c.Bool(jsonFlag.Name) {
		return writeJSON(c, got)
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
	return nil
}
