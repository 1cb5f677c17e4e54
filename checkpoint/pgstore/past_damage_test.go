package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// A damaged row of cairn_past is reported as a row of that table, by its
// round, with the advice a database's damage takes, by Pasts and by
// NewestPast alike; not as a file at an offset to restore. A row that
// holds another round's past, checksum and all, is damage too. A cairn_past that is gone
// is a damaged schema, not the server's bare "relation does not exist".
func TestDamagedPastRowIsReported(t *testing.T) {
	for _, c := range []struct {
		name, damage string
		want         []string
	}{
		{"bad cbor", `UPDATE cairn_past SET data = '\xff'::bytea WHERE agent = 'a1' AND round = 2`,
			[]string{`agent "a1"`, "row round 2 in cairn_past", "nothing was changed", "backup of the database"}},
		{"another round's", `UPDATE cairn_past SET (data, crc) = (SELECT data, crc FROM cairn_past WHERE agent = 'a1' AND round = 1)
			WHERE agent = 'a1' AND round = 2`,
			[]string{"row round 2 in cairn_past", "holds the past of round 1"}},
		{"table gone", `DROP TABLE cairn_past`,
			[]string{`relation "cairn_past" does not exist`, "schema is damaged", "nothing was changed", "backup"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := sharedURL(t)
			s := open(t, url)
			pastsAgent(t, s, "a1", 2)
			execSQL(t, url, c.damage)
			_, perr := s.Pasts("a1")
			_, _, nerr := s.NewestPast("a1")
			for what, err := range map[string]error{"Pasts": perr, "NewestPast": nerr} {
				if !errors.Is(err, checkpoint.ErrCorrupt) {
					t.Fatalf("%s of the damaged agent: %v, want damage", what, err)
				}
				msg := err.Error()
				for _, want := range c.want {
					if !strings.Contains(msg, want) {
						t.Errorf("%s: the error does not say %q: %s", what, want, msg)
					}
				}
				for _, not := range []string{"offset", "the file", "SQLSTATE"} {
					if strings.Contains(msg, not) {
						t.Errorf("%s: the error speaks of %q: %s", what, not, msg)
					}
				}
			}
		})
	}
}

// pastsAgent makes agent id with rounds committed rounds and a past for
// each boundary from 0, as a run keeps them.
func pastsAgent(t *testing.T, s *pgstore.Store, id string, rounds int) {
	t.Helper()
	lock, err := s.Lock(id, checkpoint.ThisProcess("run-a"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create(id, newState(id))
	must(t, err)
	for round := 0; round <= rounds; round++ {
		if round > 0 {
			commitRound(t, log, round)
		}
		p, err := checkpoint.NewPast(log.State(), nil)
		must(t, err)
		must(t, s.PutPast(id, p))
	}
}
