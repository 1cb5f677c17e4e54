package pgstore_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// flip is the SQL that flips the lowest bit of the first byte of text in
// column col of table's rows that match where and hold text: a byte
// inside a CBOR text string, so the row still decodes, to something else.
func flip(table, col, text, where string) string {
	at := fmt.Sprintf(`position('\x%x'::bytea in %s) - 1`, text, col)
	return fmt.Sprintf(`UPDATE %s SET %s = set_byte(%s, %s, get_byte(%s, %s) # 1) WHERE %s AND %s >= 0`,
		table, col, col, at, col, at, where, at)
}

// A byte flipped in a row, where the CBOR still decodes, is found by the
// row's CRC-32C and reported as damage to that row, in each table that
// keeps an agent: the journal, the snapshot, the pasts and the event
// history. A row with no checksum (written before schema version 7) is
// read unchecked, as before.
func TestFlippedByteInRowIsFound(t *testing.T) {
	for _, c := range []struct {
		name, damage, row string
		read              func(s *pgstore.Store) error
	}{
		{"journal", flip("cairn_journal", "payload", "turn 3", "agent = 'a1'"), "in cairn_journal",
			func(s *pgstore.Store) error { _, err := s.Read("a1"); return err }},
		{"snapshot", flip("cairn_agents", "snapshot", "/ws", "id = 'a1'"), "snapshot in cairn_agents",
			func(s *pgstore.Store) error { _, err := s.Read("a1"); return err }},
		{"past", flip("cairn_past", "data", "/ws", "agent = 'a1' AND round = 1"), "row round 1 in cairn_past",
			func(s *pgstore.Store) error { _, err := s.Pasts("a1"); return err }},
		{"events", flip("cairn_events", "data", "line", "agent = 'a1'"), "in cairn_events",
			func(s *pgstore.Store) error { _, err := s.ReadEvents("a1"); return err }},
		{"events from", flip("cairn_events", "data", "line", "agent = 'a1'"), "in cairn_events",
			func(s *pgstore.Store) error { _, err := s.ReadEventsFrom("a1", 2); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := sharedURL(t)
			s := open(t, url)
			crcAgent(t, s)
			must(t, c.read(s))
			execSQL(t, url, c.damage)
			err := c.read(s)
			if !errors.Is(err, checkpoint.ErrCorrupt) || !strings.Contains(err.Error(), c.row) ||
				!strings.Contains(err.Error(), "checksum") {
				t.Fatalf("read of the flipped row: %v, want damage %s", err, c.row)
			}
			for _, table := range []string{"cairn_journal", "cairn_past", "cairn_events"} {
				execSQL(t, url, `UPDATE `+table+` SET crc = NULL`)
			}
			execSQL(t, url, `UPDATE cairn_agents SET snapshot_crc = NULL`)
			if err := c.read(s); err != nil {
				t.Fatalf("a row without a checksum was checked: %v", err)
			}
		})
	}
}

// crcAgent makes agent a1 in s, compacted once so that its snapshot was
// rewritten by a commit, with rounds in its journal, a past per round and
// an event history.
func crcAgent(t *testing.T, s *pgstore.Store) {
	t.Helper()
	lock, err := s.Lock("a1", checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("a1", newState("a1"))
	must(t, err)
	w, err := s.Events("a1")
	must(t, err)
	for round := 1; round <= 2; round++ {
		writeLine(t, w, fmt.Sprintf("line %d\n", round))
		commitRound(t, log, round)
		p, err := checkpoint.NewPast(log.State(), nil)
		must(t, err)
		must(t, s.PutPast("a1", p))
	}
	must(t, log.Append(roundRecords(3)...))
	must(t, log.Sync())
	must(t, w.Close())
	if r, err := s.ReadEvents("a1"); err == nil {
		io.Copy(io.Discard, r)
	}
}
