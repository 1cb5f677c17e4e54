package pgstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: rows deleted from the end of an agent's journal (a
// committed round's records) went unnoticed: the agent read back at the
// round before, and resume ran the round again over a workspace that had
// its changes. cairn_agents.durable says how far the rows were durable,
// and an agent whose rows end before it is refused as lost, with nothing
// changed.
func TestDeletedCommittedRowsAreLost(t *testing.T) {
	url := sharedURL(t)
	s := open(t, url)
	committedAgent(t, s, "a1", 3)
	if rec, err := s.Read("a1"); err != nil || rec.State.Round != 3 {
		t.Fatalf("read before the damage: %v", err)
	}
	var last int64
	query(t, url, `SELECT max(seq) FROM cairn_journal WHERE agent = 'a1'`, nil, &last)
	// Round 3's four records (turn, executing, result, commit).
	execSQL(t, url, fmt.Sprintf(`DELETE FROM cairn_journal WHERE agent = 'a1' AND seq > %d`, last-4))
	before := dump(t, url)

	_, err := s.Read("a1")
	if !errors.Is(err, checkpoint.ErrLost) {
		t.Fatalf("read after round 3's rows were deleted: %v, want ErrLost", err)
	}
	for _, want := range []string{`agent "a1"`, "cairn_journal", "round 2", "nothing was loaded or changed", "backup"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-b"))
	must(t, err)
	defer lock.Unlock()
	if _, _, err := s.Open("a1"); !errors.Is(err, checkpoint.ErrLost) {
		t.Errorf("open for a run: %v, want ErrLost", err)
	}
	if after := dump(t, url); after != before {
		t.Fatal("refusing the agent changed the database")
	}
}
