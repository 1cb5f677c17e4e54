package host

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// texts are the files before and after c, failing t if they cannot be
// read.
func texts(t *testing.T, c FileChange) [2][]byte {
	t.Helper()
	before, after, err := c.Texts()
	must(t, err)
	return [2][]byte{before, after}
}

// keptFiles writes, for each size, a file of that size before and one a
// byte longer after into the workspace and staging under dir, and returns
// their effects and contents by path.
func keptFiles(t *testing.T, dir string, sizes ...int) (overlay.Effects, map[string][2][]byte) {
	t.Helper()
	var effects overlay.Effects
	want := map[string][2][]byte{}
	for i, size := range sizes {
		path := fmt.Sprintf("d/f-%d.txt", size)
		old, new := bytes.Repeat([]byte{byte('a' + i)}, size), bytes.Repeat([]byte{byte('A' + i)}, size+1)
		for _, f := range []struct {
			name string
			data []byte
		}{{filepath.Join(dir, "ws", path), old}, {overlay.StagedFile(filepath.Join(dir, "staging"), path), new}} {
			must(t, os.MkdirAll(filepath.Dir(f.name), 0o700))
			must(t, os.WriteFile(f.name, f.data, 0o600))
		}
		effects = append(effects, overlay.Effect{Path: path, Op: overlay.OpWrite, Mode: 0o644,
			Base: overlay.Version{Exists: true, Size: int64(size), Hash: sha256.Sum256(old)},
			New:  overlay.Version{Exists: true, Size: int64(size + 1), Hash: sha256.Sum256(new)}})
		want[path] = [2][]byte{old, new}
	}
	slices.SortFunc(effects, func(a, b overlay.Effect) int { return strings.Compare(a.Path, b.Path) })
	return effects, want
}

// A diff reads each file of a kept record where it lies in it, at every
// size where a CBOR head changes its length, and not a file larger than
// diffMax, which is too large to show; from a record file as from the
// directory an earlier version kept.
func TestKeptChangesAreReadWhereTheyLie(t *testing.T) {
	dir := t.TempDir()
	effects, want := keptFiles(t, dir, 0, 1, 23, 24, 255, 256, 65535, 65536, 70000, diffMax, diffMax+1)
	name := filepath.Join(dir, "rec.cbor")
	must(t, writeKeptRecord(name, filepath.Join(dir, "ws"), filepath.Join(dir, "staging"), effects))
	old := filepath.Join(dir, "call_1_0")
	for _, e := range effects {
		must(t, os.MkdirAll(filepath.Join(old, "before", "d"), 0o700))
		must(t, os.MkdirAll(filepath.Join(old, "after", "d"), 0o700))
		must(t, os.WriteFile(filepath.Join(old, "before", e.Path), want[e.Path][0], 0o600))
		must(t, os.WriteFile(filepath.Join(old, "after", e.Path), want[e.Path][1], 0o600))
	}
	manifest, err := effects.Marshal()
	must(t, err)
	must(t, os.WriteFile(filepath.Join(old, "manifest.cbor"), manifest, 0o600))
	for _, from := range []string{name, old} {
		changes, err := readCallChanges(from, "call_1_0")
		must(t, err)
		if len(changes) != len(effects) {
			t.Fatalf("%s: %d changes, want %d", from, len(changes), len(effects))
		}
		for _, c := range changes {
			before, after, err := c.Texts()
			w := want[c.Path]
			if len(w[1]) > diffMax {
				if !errors.Is(err, ErrTooLarge) || before != nil || after != nil {
					t.Errorf("%s: %s of %d bytes read as %d and %d, %v; want it too large to show", from, c.Path, len(w[1]), len(before), len(after), err)
				}
				continue
			}
			if err != nil || !bytes.Equal(before, w[0]) || !bytes.Equal(after, w[1]) || c.BeforeSize != int64(len(w[0])) || c.AfterSize != int64(len(w[1])) {
				t.Errorf("%s: %s: before %d bytes, after %d, %v; want %d and %d", from, c.Path, len(before), len(after), err, len(w[0]), len(w[1]))
			}
		}
	}
}

// A kept record that is not wholly what encodeKeptRecord writes is
// refused, never read past its end: cut anywhere, with a byte more, an
// indefinite length, a field twice or a field unknown.
func TestKeptRecordIndexRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	effects, _ := keptFiles(t, dir, 3, 300)
	name := filepath.Join(dir, "rec.cbor")
	must(t, writeKeptRecord(name, filepath.Join(dir, "ws"), filepath.Join(dir, "staging"), effects))
	good, err := os.ReadFile(name)
	must(t, err)
	if _, err := indexKeptRecord(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatalf("the record as written: %v", err)
	}
	bad := map[string][]byte{
		"a byte more":        append(bytes.Clone(good), 0),
		"indefinite map":     append([]byte{0xbf}, good[1:]...),
		"a field twice":      {0xa2, 0x01, 0x40, 0x01, 0x40},
		"an unknown field":   {0xa1, 0x04, 0x40},
		"a path twice":       {0xa1, 0x02, 0xa2, 0x61, 'a', 0x40, 0x61, 'a', 0x40},
		"a huge byte string": {0xa1, 0x01, 0x5b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	}
	for n := range len(good) {
		bad[fmt.Sprintf("cut at %d", n)] = good[:n]
	}
	for what, b := range bad {
		if _, err := indexKeptRecord(bytes.NewReader(b), int64(len(b))); err == nil {
			t.Errorf("%s: read as a record", what)
		}
	}
}

// FuzzIndexKeptRecord: no bytes make the index of a kept record panic, or
// name a file past the record's end.
func FuzzIndexKeptRecord(f *testing.F) {
	f.Add([]byte{0xa1, 0x01, 0x40})
	f.Add([]byte{0xa2, 0x01, 0x41, 0x00, 0x02, 0xa1, 0x61, 'a', 0x42, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := indexKeptRecord(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for _, files := range []map[string]span{rec.before, rec.after} {
			for p, s := range files {
				if s.off < 0 || s.n < 0 || s.off+s.n > int64(len(b)) {
					t.Fatalf("%q at %d, %d bytes, past the record's %d", p, s.off, s.n, len(b))
				}
			}
		}
	})
}
