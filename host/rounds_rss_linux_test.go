//go:build linux

package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/internal/rss"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Keeping a call's changes for `cairn diff` copies its staged files
// without holding them in memory: keeping a 128 MiB file, before and
// after, raises the host's peak resident memory by far less than the file.
// (It once read each file whole, so a call that staged up to the staging
// limit made the host as large as what it staged.)
func TestKeepChangesStreamsStagedFiles(t *testing.T) {
	const size = 128 << 20
	dir := t.TempDir()
	ws, staging := filepath.Join(dir, "ws"), filepath.Join(dir, "staging")
	for _, d := range []string{ws, staging} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, 1<<20)
	for _, p := range []string{filepath.Join(ws, "big.bin"), overlay.StagedFile(staging, "big.bin")} {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		for range size / len(big) {
			f.Write(big)
		}
		f.Close()
	}
	v := overlay.Version{Exists: true, Size: size}
	effects := overlay.Effects{{Path: "big.bin", Op: overlay.OpWrite, Base: v, New: v, Mode: 0o644}}
	big = nil
	base, err := rss.ResetPeak()
	if err != nil {
		t.Skip(err)
	}
	if err := keepChanges(filepath.Join(dir, "changes"), 1, "c1", ws, staging, effects); err != nil {
		t.Fatal(err)
	}
	hwm, _ := rss.Peak()
	t.Logf("peak RSS %d MiB, %d MiB over the %d MiB before", hwm>>20, (hwm-base)>>20, base>>20)
	if hwm-base > size/4 {
		t.Fatalf("keeping a %d MiB file raised the peak resident memory by %d MiB", size>>20, (hwm-base)>>20)
	}
}
