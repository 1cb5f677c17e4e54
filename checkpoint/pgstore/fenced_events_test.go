package pgstore_test

import (
	"errors"
	"io"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// A holder whose agent another node stole writes nothing more of the
// agent's event history: the run-end line it writes as it stops, whether
// its writer was opened before the steal or after, is refused with a
// *FencedError, and cairn_events holds only what was written before the
// steal and by the new holder. Nor does it clear a pause request meant
// for the new holder.
func TestFencedHolderWritesNoEvents(t *testing.T) {
	url := sharedURL(t)
	nodeA, nodeB := open(t, url), open(t, url)
	lockA, err := nodeA.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lockA.Unlock()
	logA, err := nodeA.Create("a1", newState("a1"))
	must(t, err)
	historyA, err := nodeA.Events("a1")
	must(t, err)
	writeLine(t, historyA, "a: round 1\n")
	commitRound(t, logA, 1) // the line goes with the commit

	lockB, err := nodeB.Steal("a1", checkpoint.ThisProcess("run-b"))
	must(t, err)
	defer lockB.Unlock()
	historyB, err := nodeB.Events("a1")
	must(t, err)
	writeLine(t, historyB, "b: resumed\n")
	must(t, historyB.Close())
	must(t, nodeB.RequestPause("a1"))
	before := eventRows(t, url)

	writeLine(t, historyA, "a: failed after 1 rounds\n")
	if err := historyA.Close(); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("A's event history after the steal: %v, want a *FencedError", err)
	}
	late, err := nodeA.Events("a1")
	must(t, err)
	writeLine(t, late, "a: late\n")
	if err := late.Close(); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("A's writer opened after the steal: %v, want a *FencedError", err)
	}
	if err := nodeA.ClearPause("a1"); !errors.Is(err, pgstore.ErrFenced) {
		t.Fatalf("A's clearing of B's pause request: %v, want a *FencedError", err)
	}
	if asked, err := nodeB.PauseRequested("a1"); err != nil || !asked {
		t.Fatalf("B's pause request after A cleared it: %v, %v", asked, err)
	}
	if after := eventRows(t, url); after != before {
		t.Fatalf("cairn_events had %d rows before A's writes and %d after", before, after)
	}
	r, err := nodeB.ReadEvents("a1")
	must(t, err)
	got, _ := io.ReadAll(r)
	if want := "a: round 1\nb: resumed\n"; string(got) != want {
		t.Fatalf("event history %q, want %q", got, want)
	}
}

// An event history written by a Store that never held the agent's lease
// is refused, with nothing written: only a holder writes it.
func TestEventsWithoutLeaseAreRefused(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	committedAgent(t, s, "a1", 1)
	w, err := s.Events("a1")
	must(t, err)
	writeLine(t, w, "stray\n")
	if err := w.Close(); !errors.Is(err, pgstore.ErrNoLease) {
		t.Fatalf("events without the lease: %v, want ErrNoLease", err)
	}
	if n := eventRows(t, url); n != 0 {
		t.Fatalf("cairn_events has %d rows", n)
	}
}

func writeLine(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(w, line); err != nil {
		t.Fatal(err)
	}
}

// eventRows counts the rows of cairn_events.
func eventRows(t *testing.T, url string) int {
	t.Helper()
	var n int
	query(t, url, `SELECT count(*) FROM cairn_events`, nil, &n)
	return n
}
