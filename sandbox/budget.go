package sandbox

import (
	"sync"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// fileBudget bounds how many files one call holds open across its mounts.
// Each is a file descriptor of the host process, which is shared by every
// call and by cairn itself; without a bound one guest could exhaust them.
type fileBudget struct {
	mu   sync.Mutex
	open int
	max  int
}

func newFileBudget(max int) *fileBudget {
	if max <= 0 {
		max = DefaultMaxOpenFiles
	}
	return &fileBudget{max: max}
}

// take reserves one open file, or fails with EAGAIN: wazero's errno set
// has no EMFILE.
func (b *fileBudget) take() experimentalsys.Errno {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open >= b.max {
		return experimentalsys.EAGAIN
	}
	b.open++
	return 0
}

// give returns one open file.
func (b *fileBudget) give() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open--
}
