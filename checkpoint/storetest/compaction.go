package storetest

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// A cut of the model's context, journaled in the middle of a round, is
// applied at once, kept by every snapshot the journal is compacted into,
// and read back with every message it cuts; what its summary cost counts.
func testCompaction(t *testing.T, s checkpoint.Store) {
	a := create(t, s, "a1", 3)
	cut := checkpoint.Compaction{Round: 4, From: 3, Pinned: 0, Policy: "summarize", Summary: "read a twice", Before: 900, After: 300, Turns: 1}
	recs := roundRecords(4, 0)
	must(t, a.log.Append(recs[0]))
	must(t, a.log.Append(checkpoint.Record{Type: checkpoint.RecCompaction, Time: t0, Round: 4, Compaction: &cut,
		Usage: &conversation.Usage{InputTokens: 100, OutputTokens: 7}}))
	if from := a.log.State().ContextFrom(); from != 3 {
		t.Fatalf("the cut is not applied as it is appended: context from %d", from)
	}
	must(t, a.log.Append(recs[1:]...))
	if _, err := a.log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: t0, Round: 4}); err != nil {
		t.Fatal(err)
	}
	for r := 5; r <= 60; r++ {
		commitRound(t, a.log, r, 200)
	}
	want := a.log.State()
	a.release()
	rec, err := s.Read("a1")
	must(t, err)
	sameState(t, "after a cut and 60 rounds", rec.State, want)
	st := rec.State
	if len(st.Compactions) != 1 || st.Compactions[0] != cut || len(st.Messages) != 1+2*60 || st.Usage.InputTokens != 60*10+100 {
		t.Fatalf("cuts %+v, %d messages, usage %+v", st.Compactions, len(st.Messages), st.Usage)
	}
}
