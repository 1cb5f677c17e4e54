package overlay

import (
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A pwrite whose end overflows a file offset is EINVAL, as pwrite(2)
// says, and charges nothing: the overlay's count of staged bytes stays
// right, later changes are judged against it, and the call is not said
// to have passed its staging limit.
func TestPwriteAtHugeOffsetChargesNothing(t *testing.T) {
	const limit = 1 << 20
	o, fsys := mounted(t, t.TempDir(), limit)
	f := create(t, fsys, "a")
	defer f.Close()
	if n, e := f.Write([]byte("hello")); n != 5 || e != 0 {
		t.Fatalf("write: %d, %v", n, e)
	}
	before := usedBytes(o)
	if n, e := f.Pwrite(make([]byte, 32), 0x7ffffffffffffff0); n != 0 || e != experimentalsys.EINVAL {
		t.Errorf("pwrite past the largest offset: %d, %v; want 0, EINVAL", n, e)
	}
	if got := usedBytes(o); got != before {
		t.Errorf("charged %d after the refused pwrite, want %d", got, before)
	}
	if err := o.Exhausted(); err != nil {
		t.Errorf("Exhausted after 5 bytes staged: %v", err)
	}
	b := create(t, fsys, "b")
	b.Close()
	if e := fsys.Mkdir("d", 0o755); e != 0 {
		t.Errorf("mkdir: %v", e)
	}
	if got, want := usedBytes(o), before+2*nodeCost; got != want {
		t.Errorf("charged %d after a file and a directory more, want %d", got, want)
	}
}

// A pwrite far past the end but short of overflowing is refused for the
// staging limit before it reaches the file, and charges nothing.
func TestPwritePastTheLimitChargesNothing(t *testing.T) {
	const limit = 1 << 20
	o, fsys := mounted(t, t.TempDir(), limit)
	f := create(t, fsys, "a")
	defer f.Close()
	before := usedBytes(o)
	if n, e := f.Pwrite(make([]byte, 32), 1<<40); n != 0 || e != errFull {
		t.Errorf("pwrite past the limit: %d, %v; want 0, %v", n, e, errFull)
	}
	if got := usedBytes(o); got != before {
		t.Errorf("charged %d after the refused pwrite, want %d", got, before)
	}
	if o.Exhausted() == nil {
		t.Error("a write past the limit was refused, but Exhausted is nil")
	}
}

// A write that fails having written nothing charges nothing, whatever its
// offset.
func TestFailedPwriteChargesNothing(t *testing.T) {
	o, fsys := mounted(t, t.TempDir(), 1<<20)
	f := create(t, fsys, "a")
	defer f.Close()
	before := usedBytes(o)
	f.(*stagedFile).F.Close() // the host file fails every write from here
	if n, e := f.Pwrite([]byte("x"), 100<<10); n != 0 || e == 0 {
		t.Fatalf("pwrite to a closed host file: %d, %v", n, e)
	}
	if n, e := f.Write([]byte("x")); n != 0 || e == 0 {
		t.Fatalf("write to a closed host file: %d, %v", n, e)
	}
	if got := usedBytes(o); got != before {
		t.Errorf("charged %d after writes that wrote nothing, want %d", got, before)
	}
}
