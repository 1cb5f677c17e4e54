package checkpoint

import (
	"os"

	"golang.org/x/sys/unix"
)

// allocate reserves the first size bytes of f on disk, extending it with
// zeros if it is shorter. Appends inside reserved space change neither the
// file's size nor its block map, so their fdatasync writes back only data
// (BENCHMARKS.md). It reports whether the space was reserved: a file
// system without fallocate is no error, only slower.
func allocate(f *os.File, size int64) bool {
	return unix.Fallocate(int(f.Fd()), 0, 0, size) == nil
}
