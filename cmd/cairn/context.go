package main

import (
	"fmt"
	"io"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/plural"
)

// printCompaction writes the line cairn log shows where a cut of the
// model's context falls: before the first message still sent.
func printCompaction(w io.Writer, c checkpoint.Compaction) {
	how := "left out of"
	if c.Summary != "" {
		how = "summarised in"
	}
	fmt.Fprintf(w, "── context cut for round %d: %s are %s what the model is sent (about %d → %s); the journal keeps them ──\n",
		c.Round, cutMessages(c, "message above", "messages above"), how, c.Before, plural.Count(c.After, "token"))
	if c.Summary != "" {
		fmt.Fprintf(w, "   summary: %s\n", oneLine(c.Summary, 300))
	}
}

// compactionEvent is the line a context_compacted event shows.
func compactionEvent(c *checkpoint.Compaction) string {
	how := "left out"
	if c.Summary != "" {
		how = "summarised"
	}
	return fmt.Sprintf("· context: %s %s for round %d (about %d → %s)", cutMessages(*c, "oldest message", "oldest messages"), how, c.Round, c.Before, plural.Count(c.After, "token"))
}

// cutMessages counts the messages a cut leaves out of what the model is
// sent, of the first c.From: all of them, or all but the task, which
// the request sends whole (c.Pinned).
func cutMessages(c checkpoint.Compaction, one, many string) string {
	if c.Pinned >= 0 {
		return fmt.Sprintf("%d of the %s, all but the task,", c.From-1, plural.Count(c.From, one, many))
	}
	return "the " + plural.Count(c.From, one, many)
}

// walkConversation calls onMessage for each message of the conversation
// and, before the first message each cut of the context left in what the
// model is sent, onCut for that cut. It stops at the first error.
func walkConversation(st *checkpoint.State, onCut func(checkpoint.Compaction) error,
	onMessage func(conversation.Message) error) error {
	cuts := st.Compactions
	for i, m := range st.Messages {
		for ; len(cuts) > 0 && cuts[0].From <= i; cuts = cuts[1:] {
			if err := onCut(cuts[0]); err != nil {
				return err
			}
		}
		if err := onMessage(m); err != nil {
			return err
		}
	}
	for _, cut := range cuts {
		if err := onCut(cut); err != nil {
			return err
		}
	}
	return nil
}
