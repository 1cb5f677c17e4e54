package filepool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchFiles makes n files of size bytes in a fresh workspace, tracked by a
// pool.
func benchFiles(b *testing.B, n, size int) (*Pool, string, []string) {
	b.Helper()
	p, dir := newPool(b, State{}, Config{MaxEntries: n})
	content := strings.Repeat("x", size)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("d%02d/f%04d.txt", i%20, i)
		writeFile(b, dir, names[i], content)
		saw(b, p, names[i])
	}
	return p, dir, names
}

// BenchmarkReconcile re-hashes 1,000 tracked files of 4 KiB; the
// ReadFiles baseline reads the same files with os.ReadFile, no hashing.
func BenchmarkReconcile(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		p, dir, names := benchFiles(b, 1000, size)
		ctx := context.Background()
		b.Run(fmt.Sprintf("1000x%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(names) * size))
			for b.Loop() {
				if cs, err := p.Reconcile(ctx); err != nil || len(cs) != 0 {
					b.Fatal(cs, err)
				}
			}
		})
		b.Run(fmt.Sprintf("ReadFiles/1000x%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(names) * size))
			for b.Loop() {
				for _, name := range names {
					if _, err := os.ReadFile(filepath.Join(dir, name)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkDrainQuiet is the per-round cost of Drain with nothing changed.
func BenchmarkDrainQuiet(b *testing.B) {
	p, _, _ := benchFiles(b, 1000, 64)
	w, err := p.Watch(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	for b.Loop() {
		if _, err := w.Drain(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
