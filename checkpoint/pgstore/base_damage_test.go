package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: cairn_agents.base raised by damage (a hand edit, a bad
// restore), alone or with durable, made a read start the journal past rows
// the snapshot does not hold: their records were skipped without a word,
// since the snapshot's checksum does not cover base. The read is refused as
// corrupt, naming the agent and the column, and nothing is changed.
func TestRaisedBaseSkippingJournalRowsIsCorrupt(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage []string
		want   string
	}{
		{"base", []string{`UPDATE cairn_agents SET base = base + 2 WHERE id = 'a1'`}, "row seq"},
		{"base and durable", []string{`UPDATE cairn_agents SET base = base + 2, durable = durable + 2 WHERE id = 'a1'`}, "row seq"},
		{"base past the journal", []string{`UPDATE cairn_agents SET base = durable + 5 WHERE id = 'a1'`}, "row seq"},
		// No row is left to show it: durable does.
		{"base past durable", []string{`DELETE FROM cairn_journal WHERE agent = 'a1'`,
			`UPDATE cairn_agents SET base = durable + 1 WHERE id = 'a1'`}, "past durable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := sharedURL(t)
			s := open(t, url)
			committedAgent(t, s, "a1", 1)
			lock, err := s.Lock("a1", checkpoint.ThisProcess("run-b"))
			must(t, err)
			_, log, err := s.Open("a1")
			must(t, err)
			must(t, log.Append(roundRecords(2)...))
			must(t, log.Sync())
			must(t, lock.Unlock())
			var below int
			query(t, url, `SELECT count(*) FROM cairn_journal j JOIN cairn_agents a ON a.id = j.agent WHERE a.id = 'a1' AND j.seq >= a.base`, nil, &below)
			if below < 3 {
				t.Fatalf("the agent has %d journal rows after its snapshot, want 3 or more to skip", below)
			}
			for _, sql := range c.damage {
				execSQL(t, url, sql)
			}
			before := dump(t, url)

			_, err = s.Read("a1")
			var ce *checkpoint.CorruptError
			if !errors.Is(err, checkpoint.ErrCorrupt) || !errors.As(err, &ce) {
				t.Fatalf("read with base raised: %v, want a *checkpoint.CorruptError", err)
			}
			for _, want := range []string{`agent "a1"`, "base in cairn_agents", c.want, "nothing was changed"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			if cerr := s.Check("a1"); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("check: %v, want Read's error", cerr)
			}
			lock, err = s.Lock("a1", checkpoint.ThisProcess("run-c"))
			must(t, err)
			if _, _, err := s.Open("a1"); !errors.Is(err, checkpoint.ErrCorrupt) {
				t.Errorf("open for a run: %v, want ErrCorrupt", err)
			}
			must(t, lock.Unlock())
			if after := dump(t, url); after != before {
				t.Fatal("refusing the agent changed the database")
			}
		})
	}
}
