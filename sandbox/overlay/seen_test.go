package overlay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Describing paths the workspace does not hold records nothing: Seen is
// what a verify must make again, and a missing path it leaves missing
// anyway. A loop of stats of distinct long missing paths cannot grow the
// host's memory.
func TestStatOfManyMissingPathsIsBounded(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "here.txt"), []byte("here"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, fsys := mounted(t, ws, 1<<20)
	long := strings.Repeat("m", 200)
	for i := range 2000 {
		p := fmt.Sprintf("%d-%s/%s/%s", i, long, long, long)
		if _, e := fsys.Stat(p); e == 0 {
			t.Fatalf("stat of missing %s succeeded", p)
		}
	}
	if _, e := fsys.Stat("here.txt"); e != 0 {
		t.Fatalf("stat here.txt: %v", e)
	}
	described, _ := o.Seen()
	if !slices.Equal(described, []string{"here.txt"}) {
		t.Errorf("described %d paths, want only here.txt", len(described))
	}
}

// Past its bound, a description or listing of what the workspace holds is
// refused (EIO) rather than recorded, what was recorded stays, and the
// call fails with ErrSeenLimit: its record would not be what it saw.
func TestSeenPastItsBoundFailsTheCall(t *testing.T) {
	ws := t.TempDir()
	for _, name := range []string{"a", "b", "c", "d"} {
		if err := os.WriteFile(filepath.Join(ws, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	o, fsys := mounted(t, ws, 1<<20)
	o.sight = sightBound{paths: 2, bytes: 1 << 10}
	for _, p := range []string{"a", "b", "a"} { // a path seen again costs nothing
		if _, e := fsys.Stat(p); e != 0 {
			t.Fatalf("stat %s within the bound: %v", p, e)
		}
	}
	if o.Exhausted() != nil {
		t.Fatalf("Exhausted within the bound: %v", o.Exhausted())
	}
	if _, e := fsys.Stat("c"); e != experimentalsys.EIO {
		t.Errorf("stat past the bound: %v, want EIO", e)
	}
	d, e := fsys.OpenFile("dir", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if e != 0 {
		t.Fatalf("open dir: %v", e)
	}
	defer d.Close()
	if _, e := d.Readdir(-1); e != experimentalsys.EIO {
		t.Errorf("listing past the bound: %v, want EIO", e)
	}
	if err := o.Exhausted(); !errors.Is(err, ErrSeenLimit) || errors.Is(err, ErrStagingLimit) {
		t.Errorf("Exhausted past the bound: %v, want ErrSeenLimit", err)
	}
	described, listed := o.Seen()
	if !slices.Equal(described, []string{"a", "b"}) || len(listed) != 0 {
		t.Errorf("seen %q and listed %q, want [a b] and none", described, listed)
	}

	o.sight = sightBound{paths: 100, bytes: 2} // a and b hold it
	o.overSeen = false
	if _, e := fsys.Stat("d"); e != experimentalsys.EIO {
		t.Errorf("stat past the bound in bytes: %v, want EIO", e)
	}
}
