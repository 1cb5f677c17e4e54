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
		Flags:  []cli.Flag{newStoreFlag(), newListJSONFlag()},
		Action: lsAction,
	}
}

func lsAction(c *cli.Context) error {
	var list []checkpoint.Summary
	store, err := openStore(c)
	switch {
	case errors.Is(err, errNoStore) && c.String(storeFlag) == "":
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
	if c.Bool(jsonFlag) {
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
	prefix := treePrefixes(depth)
	var unreadable []view.AgentLine
	for i, l := range lines {
		if l.Error != "" { // nothing of it was read: no figures; the reason below
			fmt.Fprintf(w, "%s\tunreadable\t-\t-\t-\t-\n", prefix[i]+l.Agent)
			unreadable = append(unreadable, l)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%s\t%s\n", prefix[i]+l.Agent, l.Status, l.Rounds, l.Usage.Total(), cost(l.Usage),
			l.Updated.Local().Format(time.DateTime))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, l := range unreadable {
		fmt.Fprintf(c.App.ErrWriter, "cairn: agent %s is unreadable: %s\n", l.Agent, terminalLine(l.Error))
	}
	return nil
}

// cost is what the agent's tokens cost, where the agent file gave prices.
func cost(u conversation.Usage) string {
	if u.CostMicroUSD == 0 {
		return "-"
	}
	return fmt.Sprintf("$%.4f", float64(u.CostMicroUSD)/1e6)
}

// treePrefixes draws the tree of agents listed in tree order at depths:
// a sub-agent below its parent, "├ " when a sibling follows it and "└ "
// for the last, and "│ " in the columns of ancestors whose own siblings
// are still to come.
func treePrefixes(depth []int) []string {
	out := make([]string, len(depth))
	for i, d := range depth {
		var b strings.Builder
		for level := 1; level <= d; level++ {
			more := siblingFollows(depth, i, level)
			switch {
			case level < d && more:
				b.WriteString("│ ")
			case level < d:
				b.WriteString("  ")
			case more:
				b.WriteString("├ ")
			default:
				b.WriteString("└ ")
			}
		}
		out[i] = b.String()
	}
	return out
}

// siblingFollows says whether, after row i, another row at level comes
// before the tree climbs above it: the level's branch goes on past i.
func siblingFollows(depth []int, i, level int) bool {
	for j := i + 1; j < len(depth) && depth[j] >= level; j++ {
		if depth[j] == level {
			return true
		}
	}
	return false
}
