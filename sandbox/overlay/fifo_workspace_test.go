//go:build unix

package overlay_test

import (
	"testing"

	"github.com/cairnrun/cairn/internal/fifotest"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// TestNewBlocksOnAFIFOWorkspace: an overlay of a workspace replaced by a
// FIFO is refused at once, not left waiting for a writer (which would
// hold up the call before its deadline is set).
func TestNewBlocksOnAFIFOWorkspace(t *testing.T) {
	fifotest.RefusedAtOnce(t, func(path string) (func(), error) {
		o, err := overlay.New(path, "")
		if err != nil {
			return nil, err
		}
		return func() { o.Close() }, nil
	})
}
