package filepool

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// newPool opens a pool on a fresh workspace and closes it with the test.
func newPool(t testing.TB, st State, cfg Config) (*Pool, string) {
	t.Helper()
	dir := t.TempDir()
	p, err := New(dir, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, dir
}

func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// saw records name as read in round 1 by call c1, failing the test on error.
func saw(t testing.TB, p *Pool, name string) Entry {
	t.Helper()
	e, err := p.Saw(context.Background(), name, 1, "c1", OpRead)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// paths lists the paths of changes, with their kinds.
func paths(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Path+":"+string(c.Kind))
	}
	return out
}

var testTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// eventDeadline is how long a test waits for file-system events to arrive.
// It bounds a wait, never a measurement: a slow machine only waits longer.
const eventDeadline = 5 * time.Second

// drainUntil drains w until a change of want has been reported or the
// deadline passes, and returns every change drained on the way.
func drainUntil(t *testing.T, w *Watcher, want string) []Change {
	t.Helper()
	var all []Change
	deadline := time.Now().Add(eventDeadline)
	for {
		cs, err := w.Drain(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, cs...)
		if slices.ContainsFunc(cs, func(c Change) bool { return c.Path == want }) {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("no change of %s reported within %v; got %v", want, eventDeadline, paths(all))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
