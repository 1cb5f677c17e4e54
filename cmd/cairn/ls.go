package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairnrun/cairn/checkpoint"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/internal/view"
)

func lsCommand() *cli.Command {
	return &cli.Command{
		Name:   "ls",
		Usage:  "list the agents in the store with their status",
		Flags:  []cli.Flag{storeFlag, listJSONFlag},
		Action: lsAction,
	}
}

func lsAction(c *cli.Context) error {
	var list []checkpoint.Summary
	store, err := openStore(c)
	switch {
	case errors.Is(err, errNoStore) && c.String(storeFlag.Name) == "":
		// The default store, before the first run: no agents yet.
	case err != nil:
		return err
	default:
		if list, err = store.List(); err != nil {
			return err
		}
	}
	list, depth := view.TreeOrder(list)
	lines := make([]view.AgentLine, len(list))
	for i, s := range list {
		lines[i] = view.LineOf(s)
	}
	if c.Bool(jsonFlag.Name) {
		enc := json.NewEncoder(c.App.Writer)
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return nil
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "AGENT\tSTATUS\tROUNDS\tTOKENS\tCOST\tUPDATED")
	for i, l := range lines {
		if l.Error != "" { // nothing of it was read: no figures, the reason
			fmt.Fprintf(w, "%s\tunreadable: %s\t-\t-\t-\t-\n", treeName(l.Agent, depth[i]), l.Error)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", treeName(l.Agent, depth[i]), l.Status, l.Rounds, l.Usage.Total(), cost(l.Usage),
			l.Updated.Local().Format(time.DateTime))
	}
	return w.Flush()
}

// cost is what the agent's tokens cost, where the agent file gave prices.
func cost(u conversation.Usage) string {
	if u.CostMicroUSD == 0 {
		return "-"
	}
	return fmt.Sprintf("$%.4f", float64(u.CostMicroUSD)/1e6)
}

// treeName is an agent's name in the list: a sub-agent's is indented
// below its parent's.
func treeName(id string, depth int) string {
	if depth == 0 {
		return id
	}
	return strings.Repeat("  ", depth-1) + "└ " + id
}
