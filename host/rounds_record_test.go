package host

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// The kept record that writeKeptRecord streams reads back as the files
// were, at every size where a CBOR head changes its length, and with
// records that have no files before, none after, or neither.
func TestKeptRecordStreamsWhatItReadsBack(t *testing.T) {
	dir := t.TempDir()
	ws, staging := filepath.Join(dir, "ws"), filepath.Join(dir, "staging")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var effects overlay.Effects
	want := map[string][2][]byte{}
	for i, size := range []int{0, 1, 23, 24, 255, 256, 65535, 65536, 70000} {
		path := fmt.Sprintf("d/f-%d.txt", size)
		old, new := bytes.Repeat([]byte{byte('a' + i)}, size), bytes.Repeat([]byte{byte('A' + i)}, size+i+1)
		for _, f := range []struct {
			name string
			data []byte
		}{{filepath.Join(ws, path), old}, {overlay.StagedFile(staging, path), new}} {
			must(os.MkdirAll(filepath.Dir(f.name), 0o700))
			must(os.WriteFile(f.name, f.data, 0o600))
		}
		effects = append(effects, overlay.Effect{Path: path, Op: overlay.OpWrite, Mode: 0o644,
			Base: overlay.Version{Exists: true, Size: int64(size), Hash: sha256.Sum256(old)},
			New:  overlay.Version{Exists: true, Size: int64(size + i + 1), Hash: sha256.Sum256(new)}})
		want[path] = [2][]byte{old, new}
	}
	name := filepath.Join(dir, "rec.cbor")
	must(writeKeptRecord(name, ws, staging, effects))
	rec, got, err := readKeptRecord(name)
	must(err)
	if len(got) != len(effects) {
		t.Fatalf("manifest has %d effects, want %d", len(got), len(effects))
	}
	for path, w := range want {
		if !bytes.Equal(rec.Before[path], w[0]) || !bytes.Equal(rec.After[path], w[1]) {
			t.Errorf("%s: before %d bytes, after %d; want %d and %d", path,
				len(rec.Before[path]), len(rec.After[path]), len(w[0]), len(w[1]))
		}
	}
	for _, e := range []overlay.Effects{nil, {{Path: "made", Op: overlay.OpMkdir, New: overlay.Version{Exists: true, Dir: true}}}} {
		must(writeKeptRecord(name, ws, staging, e))
		rec, got, err := readKeptRecord(name)
		must(err)
		if len(got) != len(e) || len(rec.Before)+len(rec.After) != 0 {
			t.Errorf("record of %v read back as %v with %d files", e, got, len(rec.Before)+len(rec.After))
		}
	}
}
