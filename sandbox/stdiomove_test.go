package sandbox

import (
	"bytes"
	"context"
	"testing"
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
