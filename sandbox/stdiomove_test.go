package sandbox

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"
)

// stdioMove runs testdata/rawwasi's stdio move name in a call of its own,
// over a fresh fixture, and returns what it printed of it.
func stdioMove(t *testing.T, name string) string {
	t.Helper()
	f := newFixture(t, false)
	var stdout, stderr bytes.Buffer
	p := Policy{Mounts: f.mounts(), Args: []string{"stdiomove", name}}
	ex, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr)
	if err != nil || ex.Code != 0 {
		t.Fatalf("run: %v, exit %d, stderr %s", err, ex.Code, stderr.String())
	}
	got, ok := results(stdout.String())[name]
	if !ok {
		t.Fatalf("the guest printed no %s: %q", name, stdout.String())
	}
	return got
}

// Regression: a file renumbered onto the number stderr was moved to took
// wazero's stderr's place, and the number went on naming that place: the
// file renumbered on from it left the number naming nothing, and stderr's
// hidden number free in wazero, which gave it to the next file opened. The
// guest was told that number, which was closed to it, and reached the
// file by the number it had renumbered away. A file renumbered onto a
// moved stdio now closes the stdio, as any file at the number it replaces.
func TestFileOntoMovedStdioThenOnIsNotLeftBehind(t *testing.T) {
	const want = "0 0 0 0 inside 0"
	if got := stdioMove(t, "file-onto-moved-then-on"); got != want {
		t.Errorf("got %q, want %q (errnos of the renumberings and the open, what the opened number reads and its errno)", got, want)
	}
}

// stdioMovesWant is what each stdio move of testdata/rawwasi prints.
// Errnos: 0 success, 8 EBADF, 54 ENOTDIR, 58 ENOTSUP, 76 ENOTCAPABLE.
var stdioMovesWant = map[string]string{
	"file-onto-moved-then-on": "0 0 0 0 inside 0",
	"file-onto-moved":         "0 0 8 8 0 0 2 g 0",
	"chain":                   "0 0 8 0 8 0 8 2 inside 0",
	"alias-onto-alias":        "0 0 0 0 8 8 8 2 0 0 inside 0",
	"onto-preopens":           "0 0 54 58 0 54 0 8 0 8 8",
	"narrowed":                "0 0 76 0 0 0 76 0 2 0",
	"hidden-everywhere":       "0 [8] 0 8",
}

// A guest moving stdio about with fd_renumber (onto files, preopens and
// each other, narrowed, closed in turn) never reaches a file by a number
// it gave up, nor a preopen under another name, and every function taking
// a descriptor finds the number a stdio left closed.
func TestEscapeStdioMoves(t *testing.T) {
	for name, want := range stdioMovesWant {
		if got := stdioMove(t, name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}

// What cairn records of the stdio an instance moved goes with the
// instance however its call ends: returning, trapping, exiting, stopped
// at its deadline or cancelled.
func TestStdioMovesGoWithTheInstance(t *testing.T) {
	m := compile(t, "rawwasi")
	f := newFixture(t, false)
	for _, c := range []struct {
		name    string
		timeout time.Duration
		cancel  bool
	}{{"file-onto-moved", 0, false}, {"then-trap", 0, false}, {"then-exit", 0, false},
		{"then-spin", 300 * time.Millisecond, false}, {"then-spin", 0, true}} {
		ctx, cancel := context.WithCancel(context.Background())
		stdout := writerFunc(func(b []byte) (int, error) {
			if c.cancel && bytes.Contains(b, []byte("spinning")) {
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			return len(b), nil
		})
		p := Policy{Mounts: f.mounts(), Args: []string{"stdiomove", c.name}, Timeout: c.timeout}
		_, err := m.Run(ctx, p, nil, stdout, io.Discard)
		cancel()
		n := 0
		testRT.fds.moves.instances.Range(func(any, any) bool { n++; return true })
		t.Logf("%s: %v", c.name, err)
		if n != 0 {
			t.Errorf("%s (%v): the moves of %d instances are still recorded", c.name, err, n)
		}
	}
}
