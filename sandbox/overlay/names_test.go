package overlay

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// deepDir makes, through fsys, a chain of directories with 250-byte names
// whose path is nearly PATH_MAX long, and returns its path.
func deepDir(t *testing.T, fsys experimentalsys.FS) string {
	t.Helper()
	p := "."
	for i := range 15 {
		p = join(p, fmt.Sprintf("%03d%s", i, strings.Repeat("d", 247)))
		if e := fsys.Mkdir(p, 0o755); e != 0 {
			t.Fatalf("mkdir of %d bytes: %v", len(p), e)
		}
	}
	return p
}

// Empty files made at the bottom of a chain of long directory names,
// within the paths and bytes limits, are refused (EIO) once the names of
// the changed paths come to maxNameBytes, and the call fails with
// ErrStagingLimit: the effects list names every path, and the record the
// host journals of it must fit a journal frame. (2,200 paths of 50 KB
// each made a record of 211 MB, which no frame holds, and the whole run
// failed.)
func TestChangedPathNamesAreBounded(t *testing.T) {
	o, fsys := mounted(t, t.TempDir(), 256<<20)
	deep := deepDir(t, fsys)
	made := 0
	for ; made < 2000; made++ {
		f, e := fsys.OpenFile(fmt.Sprintf("%s/f%04d", deep, made), experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o644)
		if e == experimentalsys.EIO {
			break
		}
		if e != 0 {
			t.Fatalf("create file %d: %v", made, e)
		}
		f.Close()
	}
	if made == 2000 {
		t.Fatalf("2000 files of %d-byte paths were all made", len(deep)+6)
	}
	if err := o.Exhausted(); !errors.Is(err, ErrStagingLimit) || !errors.Is(err, ErrNameLimit) || !strings.Contains(err.Error(), "names come to more than 4 MiB") {
		t.Errorf("Exhausted: %v, want ErrStagingLimit for the bytes of names", err)
	}
	effects, err := o.Effects()
	if err != nil {
		t.Fatal(err)
	}
	b, err := effects.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxNameBytes+len(effects)*128 {
		t.Errorf("the effects of %d paths encode to %d bytes, more than their names' bound and 128 bytes each", len(effects), len(b))
	}
}

// Renaming a directory whose entries' new names would pass maxNameBytes
// is refused before anything in it moves.
func TestRenameDirPastNameBoundMovesNothing(t *testing.T) {
	o, fsys := mounted(t, t.TempDir(), 256<<20)
	deep := deepDir(t, fsys)
	for _, dir := range []struct {
		name  string
		files int
		want  experimentalsys.Errno
	}{{"s", 500, 0}, {"u", 700, experimentalsys.EIO}} {
		if e := fsys.Mkdir(dir.name, 0o755); e != 0 {
			t.Fatal(e)
		}
		for i := range dir.files {
			create(t, fsys, fmt.Sprintf("%s/f%03d", dir.name, i)).Close()
		}
		if e := fsys.Rename(dir.name, deep+"/"+dir.name); e != dir.want {
			t.Fatalf("rename %s, of %d files, to %d bytes down: %v, want %v", dir.name, dir.files, len(deep), e, dir.want)
		}
	}
	if _, e := fsys.Stat("u/f699"); e != 0 {
		t.Errorf("u/f699 after the refused rename: %v", e)
	}
	if _, e := fsys.Stat(deep + "/u"); e != experimentalsys.ENOENT {
		t.Errorf("the refused rename's target: %v, want ENOENT", e)
	}
	if err := o.Exhausted(); !errors.Is(err, ErrStagingLimit) {
		t.Errorf("Exhausted: %v, want ErrStagingLimit", err)
	}
}
