package main

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/plural"
)

func memoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "list and remove the facts agents keep in memory namespaces",
		Subcommands: []*cli.Command{
			{Name: "ls", Usage: "list the namespaces, or the facts of one", ArgsUsage: "[NAMESPACE]", Flags: []cli.Flag{newStoreFlag(), newListJSONFlag()}, Action: memoryLsAction},
			{Name: "rm", Usage: "remove a fact", ArgsUsage: "NAMESPACE KEY", Flags: []cli.Flag{newStoreFlag()}, Action: memoryRmAction},
		},
	}
}

// openMemory opens the store as a Memory.
func openMemory(c *cli.Context) (checkpoint.Memory, error) {
	store, err := openStore(c)
	if err != nil {
		return nil, err
	}
	m, ok := store.(checkpoint.Memory)
	if !ok {
		return nil, checkpoint.ErrNoMemory
	}
	return m, nil
}

func memoryLsAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return withCode(exitUsage, errors.New("usage: cairn memory ls [NAMESPACE]"))
	}
	m, err := openMemory(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return listNamespaces(c, m)
	}
	facts, err := m.Recall(c.Args().First())
	if err != nil {
		return withCode(exitUsage, err)
	}
	if c.Bool(jsonFlag) {
		for _, f := range facts {
			if err := writeJSON(c, factJSON{Namespace: c.Args().First(), Key: f.Key, Text: f.Text, Agent: f.Agent, Round: f.Round, Call: f.Call, Time: f.Time}); err != nil {
				return err
			}
		}
		return nil
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tFACT\tAGENT\tROUND\tWRITTEN")
	for _, f := range facts {
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", f.Key, firstLine(f.Text), f.Agent, f.Round, f.Time.Local().Format(time.DateTime))
	}
	return w.Flush()
}

// factJSON is a fact as memory ls --json prints it.
type factJSON struct {
	Namespace string    `json:"namespace"`
	Key       string    `json:"key"`
	Text      string    `json:"text"`
	Agent     string    `json:"agent,omitempty"`
	Round     int       `json:"round,omitempty"`
	Call      string    `json:"call,omitempty"`
	Time      time.Time `json:"time"`
}

func listNamespaces(c *cli.Context, m checkpoint.Memory) error {
	names, err := m.Namespaces()
	if err != nil {
		return err
	}
	for _, ns := range names {
		facts, err := m.Recall(ns)
		if err != nil {
			return err
		}
		if c.Bool(jsonFlag) {
			err = writeJSON(c, map[string]any{"namespace": ns, "facts": len(facts)})
		} else {
			_, err = fmt.Fprintf(c.App.Writer, "%s\t%s\n", ns, plural.Count(len(facts), "fact"))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func memoryRmAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return withCode(exitUsage, errors.New("usage: cairn memory rm NAMESPACE KEY"))
	}
	m, err := openMemory(c)
	if err != nil {
		return err
	}
	ns, key := c.Args().Get(0), c.Args().Get(1)
	if err := m.Forget(ns, key); err != nil {
		return runError(err)
	}
	fmt.Fprintf(c.App.Writer, "removed %s from %s\n", key, ns)
	return nil
}
