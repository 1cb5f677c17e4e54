package main

import (
	"fmt"
	"io"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// printCompaction writes the line cairn log shows where a cut of the
// model's context falls: before the first message still sent.
func printCompaction(w io.Writer, c checkpoint.Compaction) {
	how := "left out of"
	if c.Summary != "" {
		how = "summarised in"
	}
	fmt.Fprintf(w, "── context cut for round %d: %s are %s what the model is sent (about %d → %d tokens); the journal keeps them ──\n",
		c.Round, cutMessages(c, "messages above"), how, c.Before, c.After)
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
	return fmt.Sprintf("· context: %s %s for round %d (about %d → %d tokens)", cutMessages(*c, "oldest messages"), how, c.Round, c.Before, c.After)
}

// cutMessages counts the messages a cut leaves out of what the model is
// sent, of the first c.From: all of them, or all but the task, which
// the request sends whole (c.Pinned).
func cutMessages(c checkpoint.Compaction, what string) string {
	if c.Pinned >= 0 {
		return fmt.Sprintf("%d of the %d %s, all but the task,", c.From-1, c.From, what)
	}
	return fmt.Sprintf("the %d %s", c.From, what)
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
