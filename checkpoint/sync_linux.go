package checkpoint

import "golang.org/x/sys/unix"

// fdatasync makes a file's data durable, skipping metadata that reading
// the data back does not need.
func fdatasync(fd int) error { return unix.Fdatasync(fd) }
