package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// Regression: a blob file whose bytes were damaged was never repaired.
// PutBlob of its content found the file there and only touched its time,
// so every agent that stored it since (a new run of the same agent file,
// an import of a good export that holds it) was committed over bytes that
// cannot be read. Storing the blob again now gives the file its bytes
// back, durably; a blob nobody stores again stays reported as corrupt.
func TestDamagedBlobFileRepairedByStoringIt(t *testing.T) {
	data := []byte("name: reporter\nmodel: script\n")
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"a byte changed", func(t *testing.T, path string) {
			b := bytes.Clone(data)
			b[0] = 'X'
			must(t, os.WriteFile(path, b, 0o644))
		}},
		{"cut short", func(t *testing.T, path string) { must(t, os.Truncate(path, 4)) }},
		{"emptied", func(t *testing.T, path string) { must(t, os.Truncate(path, 0)) }},
		{"grown", func(t *testing.T, path string) {
			must(t, os.WriteFile(path, append(bytes.Clone(data), "junk"...), 0o644))
		}},
		{"a FIFO in its place", func(t *testing.T, path string) {
			must(t, os.Remove(path))
			must(t, syscall.Mkfifo(path, 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := OpenFileStore(dir)
			must(t, err)
			d, err := s.PutBlob(data)
			must(t, err)
			path := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(d, "sha256:"))
			tc.damage(t, path)

			_, err = s.Blob(d)
			var ce *CorruptError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || !strings.Contains(err.Error(), "blob "+d) {
				t.Fatalf("a damaged blob nobody stored again read: %v; want a CorruptError naming it", err)
			}
			if !strings.Contains(err.Error(), "storing the blob again") || strings.Contains(err.Error(), "move the agent aside") {
				t.Fatalf("the error does not say what repairs a blob: %v", err)
			}

			var mu sync.Mutex
			var synced []string
			stop := syncpoint.Observe(func(p string) { mu.Lock(); synced = append(synced, p); mu.Unlock() })
			got, err := s.PutBlob(data)
			stop()
			if err != nil || got != d {
				t.Fatalf("store it again: %s, %v", got, err)
			}
			if b, err := s.Blob(d); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("after storing it again: %q, %v; want the file repaired", b, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if !containsPath(synced, filepath.Dir(path)) {
				t.Fatalf("the repair synced %q, not the blobs' directory: a power cut could lose it", synced)
			}
			if left, _ := filepath.Glob(path + ".*"); len(left) != 0 {
				t.Fatalf("the repair left %q", left)
			}
		})
	}
}

// A sound blob stored again is left as it is: not rewritten, so storing
// a module every start costs no fsync.
func TestSoundBlobStoredAgainNotRewritten(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenFileStore(dir)
	must(t, err)
	data := []byte("module bytes")
	d, err := s.PutBlob(data)
	must(t, err)
	path := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(d, "sha256:"))
	before, err := os.Stat(path)
	must(t, err)
	var mu sync.Mutex
	var synced []string
	stop := syncpoint.Observe(func(p string) { mu.Lock(); synced = append(synced, p); mu.Unlock() })
	_, err = s.PutBlob(data)
	stop()
	must(t, err)
	after, err := os.Stat(path)
	must(t, err)
	if !os.SameFile(before, after) || len(synced) != 0 {
		t.Fatalf("a sound blob stored again was rewritten (same file %v, synced %q)", os.SameFile(before, after), synced)
	}
}

func containsPath(paths []string, p string) bool {
	for _, q := range paths {
		if q == p {
			return true
		}
	}
	return false
}
