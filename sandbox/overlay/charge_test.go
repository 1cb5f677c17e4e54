package overlay

import (
	"bytes"
	"fmt"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// writeAll writes n bytes to f until done or refused, and returns how
// many it wrote.
func writeAll(f experimentalsys.File, n int) int {
	buf := bytes.Repeat([]byte("x"), n)
	written := 0
	for written < n {
		k, e := f.Write(buf[written:])
		written += k
		if e != 0 || k == 0 {
			break
		}
	}
	return written
}

// A staged file unlinked while a handle still holds it keeps its bytes
// on disk, so they stay charged against the staging limit until the last
// handle closes: a call cannot fill the disk past the limit by writing
// files, unlinking them and keeping them open. Closing gives the bytes
// back, once.
func TestUnlinkedOpenFileStaysCharged(t *testing.T) {
	const limit, each, files = 100 << 10, 40 << 10, 5
	o, fsys := mounted(t, t.TempDir(), limit)
	var open []experimentalsys.File
	written := 0
	for i := range files {
		p := fmt.Sprintf("f%d", i)
		f, e := fsys.OpenFile(p, experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o644)
		if e != 0 {
			break // refused for the limit: nothing staged for it
		}
		open = append(open, f)
		written += writeAll(f, each)
		if e := fsys.Unlink(p); e != 0 {
			t.Fatalf("unlink %s: %v", p, e)
		}
	}
	if total := int64(written) + int64(len(open)*nodeCost); total > limit {
		t.Fatalf("%d bytes written through %d unlinked open files: %d staged with a limit of %d", written, len(open), total, limit)
	}
	if o.Exhausted() == nil {
		t.Error("the writes past the limit were refused, but Exhausted is nil")
	}
	nodes := int64(len(open) * nodeCost) // an unlinked path stays a change
	if got, want := usedBytes(o), int64(written)+nodes; got != want {
		t.Errorf("charged %d with the unlinked files open, want %d", got, want)
	}
	for range 2 { // a second close refunds nothing more
		for _, f := range open {
			if e := f.Close(); e != 0 {
				t.Fatal(e)
			}
		}
		if got := usedBytes(o); got != nodes {
			t.Fatalf("charged %d once the unlinked files are closed, want %d (their paths)", got, nodes)
		}
	}
	g := create(t, fsys, "g")
	defer g.Close()
	if want := int(limit - nodes - nodeCost); writeAll(g, want) != want {
		t.Errorf("the bytes of the closed files were not given back")
	}
}

// A staged file renamed over while a handle still holds it stays charged
// too, until that handle closes.
func TestReplacedOpenFileStaysCharged(t *testing.T) {
	const limit, each = 1 << 20, 40 << 10
	o, fsys := mounted(t, t.TempDir(), limit)
	a := create(t, fsys, "a")
	b := create(t, fsys, "b")
	if writeAll(a, each) != each || writeAll(b, each) != each {
		t.Fatal("short writes under the limit")
	}
	if e := b.Close(); e != 0 {
		t.Fatal(e)
	}
	if e := fsys.Rename("b", "a"); e != 0 {
		t.Fatalf("rename b over a: %v", e)
	}
	if got, want := usedBytes(o), int64(2*each+2*nodeCost); got != want {
		t.Errorf("charged %d with the replaced a open, want %d", got, want)
	}
	if e := a.Close(); e != 0 {
		t.Fatal(e)
	}
	if got, want := usedBytes(o), int64(each+2*nodeCost); got != want {
		t.Errorf("charged %d once the replaced a is closed, want %d", got, want)
	}
}
