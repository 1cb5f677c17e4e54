//go:build !linux

package checkpoint

import "golang.org/x/sys/unix"

// fdatasync makes a file's data durable. Where fdatasync is not available
// it is fsync, which writes the metadata back too.
func fdatasync(fd int) error { return unix.Fsync(fd) }
