//go:build unix

package filepool

import (
	"os"
	"syscall"
)

// openFlags opens without blocking, so a FIFO planted where a file was
// cannot stall the pool.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
