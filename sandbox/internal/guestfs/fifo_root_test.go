//go:build unix

package guestfs

import (
	"testing"

	"github.com/cairnrun/cairn/internal/fifotest"
)

// TestNewDirBlocksOnAFIFORoot: a mount whose host directory was replaced
// by a FIFO (between two calls, say) is refused at once. Opening it to
// read would wait for a writer, holding up the call before its deadline
// is set, and with it Trim and every call after.
func TestNewDirBlocksOnAFIFORoot(t *testing.T) {
	fifotest.RefusedAtOnce(t, func(path string) (func(), error) {
		d, err := NewDir(path, true, NewBudget(1))
		if err != nil {
			return nil, err
		}
		return func() { d.Close() }, nil
	})
}
