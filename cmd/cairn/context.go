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
	how := "left out"
	if c.Summary != "" {
		how = "summarised"
	}
	fmt.Fprintf(w, "── context cut for round %d: the %d messages above are %s in what the model is sent (about %d → %d tokens); the journal keeps them ──\n",
		c.Round, c.From, how, c.Before, c.After)
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
	return fmt.Sprintf("· context: the %d oldest messages %s for round %d (about %d → %d tokens)", c.From, how, c.Round, c.Before, c.After)
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
