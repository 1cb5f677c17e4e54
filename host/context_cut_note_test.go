package host

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: the note at the head of a request past a cut said the
// conversation's first N messages were left out, though the first of
// them, the task, was sent word for word just above it. A cut made now
// counts only what is left out; a cut journaled before says what it said,
// so that the request it makes is rebuilt as it was sent.
func TestContextNoteCountsWhatIsLeftOut(t *testing.T) {
	st := threeRounds(10)
	for _, c := range []struct {
		cut  checkpoint.Compaction
		want string
	}{
		{checkpoint.Compaction{Round: 3, From: 5, Pinned: 0, Policy: "drop", Turns: 2},
			"[cairn: the conversation's first 5 messages (2 turns of the model) are left out of this request to keep it within its context budget; the agent's journal keeps them all.]"},
		{checkpoint.Compaction{Round: 3, From: 5, Pinned: 0, Policy: "summarize", Summary: "Read a.", Turns: 2},
			"[cairn: the conversation's first 5 messages (2 turns of the model) are left out of this request to keep it within its context budget; the agent's journal keeps them all. A summary of them:]\n\nRead a."},
		{checkpoint.Compaction{Round: 3, From: 5, Pinned: 0, Policy: "drop", Turns: 2, Wording: noteWording},
			"[cairn: 4 earlier messages, all but the task above (2 turns of the model), are left out of this request to keep it within its context budget; the journal keeps them all.]"},
		{checkpoint.Compaction{Round: 3, From: 5, Pinned: -1, Policy: "drop", Turns: 2, Wording: noteWording},
			"[cairn: the conversation's first 5 messages (2 turns of the model) are left out of this request to keep it within its context budget; the agent's journal keeps them all.]"},
	} {
		head := headOf(st, &c.cut)
		if got := head[len(head)-1].Text; got != c.want {
			t.Errorf("cut %+v: the note is\n%s\nwant\n%s", c.cut, got, c.want)
		}
	}

	rec := &recorder{t: t, budget: budget}
	eng, store := recordingEngine(t, rec, nil)
	if _, err := eng.Run(context.Background(), RunOptions{Agent: contextAgent(t, policies["summarize"], 40), ID: "long", Prompt: contextPrompt}); err != nil {
		t.Fatal(err)
	}
	st = readState(t, store, "long")
	c := st.LastCompaction()
	if c == nil || c.Pinned != 0 || c.Wording != noteWording {
		t.Fatalf("the last cut is %+v: want one of the task pinned, in the wording of now", c)
	}
	if note := headOf(st, c)[1].Text; !strings.Contains(note, "earlier messages, all but the task above") {
		t.Errorf("the note of a cut made now: %.200s", note)
	}
}
