package host

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/internal/fifotest"
)

// Regression: a fork and `cairn gc` read a workspace's fork mark with a
// plain read, so a FIFO of its name in the directory held either until a
// writer came, forever. It is not opened: the directory has no mark, and
// a fork into it is refused as not empty.
func TestForkMarkThatIsAFIFOIsNotWaitedOn(t *testing.T) {
	fifotest.RefusedAtOnceNamed(t, forkMarkName, func(path string) (func(), error) {
		if _, ok := readForkMark(filepath.Dir(path)); ok {
			return func() {}, nil
		}
		return nil, errors.New("no mark")
	})
	fifotest.RefusedAtOnceNamed(t, forkMarkName, func(path string) (func(), error) {
		filled, err := forkMark{Agent: "b", From: "a", Round: 1}.filledIn(filepath.Dir(path))
		if err == nil && filled {
			return func() {}, nil
		}
		if !errors.Is(err, ErrWorkspaceNotEmpty) {
			t.Errorf("a fork into a directory holding a FIFO of the mark's name: %v, want ErrWorkspaceNotEmpty", err)
		}
		return nil, err
	})
}
