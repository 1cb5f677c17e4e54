package pgstore_test

import (
	"errors"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: the reads that name an agent or a workflow took any string
// to the database: an id no agent can have ("a b", "../x") was said not
// found, where the directory store refuses it as no id, and one with a NUL
// byte failed with the server's "invalid byte sequence for encoding", the
// NUL printed raw. Each is refused as an invalid id before the database
// is asked, as by the directory store.
func TestInvalidIDRefusedByReads(t *testing.T) {
	s := open(t, sharedURL(t))
	for _, id := range []string{"a b", "../x", "x\x00y", ""} {
		for what, call := range map[string]func() error{
			"Read":           func() error { _, err := s.Read(id); return err },
			"Summary":        func() error { _, err := s.Summary(id); return err },
			"Check":          func() error { return s.Check(id) },
			"Workflow":       func() error { _, err := s.Workflow(id); return err },
			"Pasts":          func() error { _, err := s.Pasts(id); return err },
			"NewestPast":     func() error { _, _, err := s.NewestPast(id); return err },
			"ReadEvents":     func() error { _, err := s.ReadEvents(id); return err },
			"ReadEventsFrom": func() error { _, err := s.ReadEventsFrom(id, 0); return err },
			"Bookmarks":      func() error { _, err := s.Bookmarks(id); return err },
			"RequestPause":   func() error { return s.RequestPause(id) },
			"PauseRequested": func() error { _, err := s.PauseRequested(id); return err },
		} {
			if err := call(); !errors.Is(err, checkpoint.ErrInvalidID) {
				t.Errorf("%s(%q): %v, want it refused as an invalid id", what, id, err)
			}
		}
	}
}
