package pgstore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
)

// Check finds a readable agent readable without reading it, a snapshot of
// several of its pieces among them, and gives Read's error, word for
// word, for an agent Read refuses; a row written before checksums is left
// to Read, which reads it.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name     string
		damage   string // SQL, of agent a1
		clean    bool   // Check finds it readable without reading it
		readable bool
	}{
		{"sound", ``, true, true},
		{"snapshot damaged", `UPDATE cairn_agents SET snapshot = overlay(snapshot placing '\xaaaa'::bytea from 30) WHERE id = 'a1'`, false, false},
		{"journal row damaged", `UPDATE cairn_journal SET payload = overlay(payload placing '\xaa'::bytea from 5) WHERE agent = 'a1' AND seq = (SELECT min(seq) + 1 FROM cairn_journal WHERE agent = 'a1')`, false, false},
		{"journal row missing", `DELETE FROM cairn_journal WHERE agent = 'a1' AND seq = (SELECT min(seq) + 1 FROM cairn_journal WHERE agent = 'a1')`, false, false},
		{"last rows lost", `DELETE FROM cairn_journal WHERE agent = 'a1' AND seq = (SELECT max(seq) FROM cairn_journal WHERE agent = 'a1')`, false, false},
		{"a row of another type", `UPDATE cairn_journal SET type = 99 WHERE agent = 'a1' AND seq = (SELECT min(seq) FROM cairn_journal WHERE agent = 'a1')`, false, false},
		{"rows from before checksums", `UPDATE cairn_agents SET snapshot_crc = NULL WHERE id = 'a1'`, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := sharedURL(t)
			s := open(t, url)
			committedAgent(t, s, "a1", 3)
			if c.damage != "" {
				execSQL(t, url, c.damage)
			}
			_, want := s.Read("a1")
			if (want == nil) != c.readable {
				t.Fatalf("Read after the damage: %v", want)
			}
			err := s.Check("a1")
			if want == nil && err != nil || want != nil && (err == nil || err.Error() != want.Error()) {
				t.Fatalf("Check: %v; want Read's %v", err, want)
			}
			if got := pgstore.Clean(s, "a1"); got != c.clean {
				t.Fatalf("Check found it readable without reading it: %t, want %t", got, c.clean)
			}
		})
	}
	t.Run("no agent", func(t *testing.T) {
		s := open(t, sharedURL(t))
		if err := s.Check("nobody"); !errors.Is(err, checkpoint.ErrNotFound) {
			t.Fatalf("Check of no agent: %v", err)
		}
	})
	t.Run("a snapshot of several pieces", func(t *testing.T) {
		s := open(t, sharedURL(t))
		lock, err := s.Lock("big", checkpoint.ThisProcess("run-a"))
		must(t, err)
		st := newState("big")
		text := strings.Repeat("x", 64<<10)
		for i := 0; i < 160; i++ { // 10 MiB, in three pieces
			st.Messages = append(st.Messages, conversation.Message{Role: conversation.RoleUser, Text: text})
		}
		log, err := s.Create("big", st)
		must(t, err)
		commitRound(t, log, 1)
		must(t, log.Close())
		must(t, lock.Unlock())
		if err := s.Check("big"); err != nil || !pgstore.Clean(s, "big") {
			t.Fatalf("Check of an agent of a 10 MiB state: %v, clean %t", err, pgstore.Clean(s, "big"))
		}
	})
}
