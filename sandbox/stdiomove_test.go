package sandbox

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnrun/cairn/abi"
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
	"file-onto-moved-preopen": "0 0 0 8 54 8 0",
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
		if n != 0 || testRT.fds.moves.n.Load() != 0 {
			t.Errorf("%s (%v): the moves of %d instances are still recorded (counted %d)", c.name, err, n, testRT.fds.moves.n.Load())
		}
	}
}

// reactorMovingStdio assembles a fast-mode module whose cairn_call moves
// stderr onto stdout, fd_renumber(2, 1), and returns its errno: a call
// that finds 2 already moved (EBADF) exits with status 8.
func reactorMovingStdio() []byte {
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, asmSection(1, asmVec([]byte{0x60, 0, 0}, []byte{0x60, 0, 1, 0x7f}, []byte{0x60, 2, 0x7f, 0x7f, 1, 0x7f}))...)
	m = append(m, asmSection(2, asmVec(append(append(asmName("wasi_snapshot_preview1"), asmName("fd_renumber")...), 0, 2)))...)
	m = append(m, asmSection(3, asmVec([]byte{0}, []byte{1}))...)
	m = append(m, asmSection(5, asmVec([]byte{0, 1}))...)
	m = append(m, asmSection(7, asmVec(
		append(asmName(abi.InitExport), 0, 1),
		append(asmName(abi.CallExport), 0, 2),
		append(asmName("memory"), 2, 0)))...)
	m = append(m, asmSection(10, asmVec(asmBody(0x0b), asmBody(0x41, 2, 0x41, 1, 0x10, 0, 0x0b)))...)
	return m
}

// Each call of a fast-mode module, in a spare made ahead or not, starts
// with stdio where wazero put it, whatever the calls before it moved, and
// what cairn records of the moves goes with each instance.
func TestStdioMovesDoNotOutliveTheirCall(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Config{CacheDir: filepath.Join(guestsDir, "cache")})
	must(t, err)
	defer rt.Close(ctx)
	m, err := rt.Compile(ctx, reactorMovingStdio())
	must(t, err)
	if m.pre == nil {
		t.Fatal("not in the fast mode")
	}
	for i := range 4 {
		ex, err := m.Run(ctx, Policy{}, nil, io.Discard, io.Discard)
		if err != nil || ex.Code != 0 {
			t.Errorf("call %d: %v, exit %d, want 0 (fd_renumber(2, 1) of stdio where wazero put it)", i, err, ex.Code)
		}
		m.r.bg.Wait()
	}
	n := 0
	rt.fds.moves.instances.Range(func(any, any) bool { n++; return true })
	if n != 0 || rt.fds.moves.n.Load() != 0 {
		t.Errorf("the moves of %d closed instances are kept (counted %d)", n, rt.fds.moves.n.Load())
	}
}
