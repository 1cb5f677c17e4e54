package pgstore_test

import (
	"errors"
	"io"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// ReadEventsFrom gives the history from any byte on, across the rows of
// the writes that made it, and nothing past its end; ErrNotFound for an
// agent with none.
func TestReadEventsFrom(t *testing.T) {
	s := open(t, sharedURL(t))
	lock, err := s.Lock("e1", checkpoint.ThisProcess("test"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create("e1", newState("e1"))
	must(t, err)
	must(t, log.Close())
	w, err := s.Events("e1")
	must(t, err)
	for _, line := range []string{"one\n", "two\n", "three\n"} {
		if _, err := io.WriteString(w, line); err != nil {
			t.Fatal(err)
		}
	}
	must(t, w.Close())
	whole := "one\ntwo\nthree\n"
	for _, off := range []int64{0, 2, 4, 5, 13, 14, 20} {
		r, err := s.ReadEventsFrom("e1", off)
		must(t, err)
		got, _ := io.ReadAll(r)
		want := ""
		if off < int64(len(whole)) {
			want = whole[off:]
		}
		if string(got) != want {
			t.Errorf("from %d: %q, want %q", off, got, want)
		}
	}
	if _, err := s.ReadEventsFrom("nobody", 0); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("an agent with no history: %v", err)
	}
}
