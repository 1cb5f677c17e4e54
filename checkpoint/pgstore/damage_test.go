package pgstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// D6: a damaged row of an agent is reported as a row of a table — the
// journal's by its sequence number, the snapshot in cairn_agents — with
// advice that fits a database, not as a file at an offset to restore or
// move aside. It is still a *checkpoint.CorruptError underneath, for the
// callers that branch on one.
func TestCorruptRowNamesTableAndSeq(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(seq int64) string
		want   func(seq int64) string
	}{
		{"journal row", func(seq int64) string {
			return fmt.Sprintf(`UPDATE cairn_journal SET payload = substring(payload from 1 for 3) WHERE agent = 'a1' AND seq = %d`, seq)
		}, func(seq int64) string { return fmt.Sprintf("row seq %d in cairn_journal", seq) }},
		{"missing journal row", func(seq int64) string {
			return fmt.Sprintf(`DELETE FROM cairn_journal WHERE agent = 'a1' AND seq = %d`, seq)
		}, func(seq int64) string { return fmt.Sprintf("row seq %d in cairn_journal", seq) }},
		{"snapshot", func(int64) string {
			return `UPDATE cairn_agents SET snapshot = substring(snapshot from 1 for 10) WHERE id = 'a1'`
		}, func(int64) string { return "snapshot in cairn_agents" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := sharedURL(t)
			s := open(t, url)
			lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
			must(t, err)
			log, err := s.Create("a1", newState("a1"))
			must(t, err)
			must(t, log.Append(roundRecords(1)...))
			must(t, log.Sync())
			must(t, lock.Unlock())
			var seq int64
			query(t, url, `SELECT min(seq) + 1 FROM cairn_journal WHERE agent = 'a1'`, nil, &seq)
			execSQL(t, url, c.damage(seq))

			_, err = s.Read("a1")
			var ce *checkpoint.CorruptError
			if !errors.Is(err, checkpoint.ErrCorrupt) || !errors.As(err, &ce) {
				t.Fatalf("read of the damaged agent: %v, want a *checkpoint.CorruptError", err)
			}
			msg := err.Error()
			for _, want := range []string{c.want(seq), `agent "a1"`, "nothing was changed", "backup of the database"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not say %q: %s", want, msg)
				}
			}
			for _, not := range []string{"offset", "the file", "move the agent aside"} {
				if strings.Contains(msg, not) {
					t.Errorf("the error speaks of %q, as of a file: %s", not, msg)
				}
			}
		})
	}
}
