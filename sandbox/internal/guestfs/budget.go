package guestfs

import (
	"sync"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Budget bounds how many files one call holds open across its mounts.
// Each is a file descriptor of the host process, which is shared by every
// call and by cairn itself; without a bound one guest could exhaust them.
type Budget struct {
	mu   sync.Mutex
	open int
	max  int
}

func NewBudget(max int) *Budget {
	if max <= 0 {
		max = DefaultMaxOpenFiles
	}
	return &Budget{max: max}
}

// take reserves one open file, or fails with EAGAIN: wazero's errno set
// has no EMFILE, which Dir.TakeFile has the guest told.
func (b *Budget) Take() experimentalsys.Errno {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open >= b.max {
		return experimentalsys.EAGAIN
	}
	b.open++
	return 0
}

// give returns one open file.
func (b *Budget) Give() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open--
}

// DefaultMaxOpenFiles is the bound of a budget made with max 0. Every
// file a guest opens is a file descriptor of the host process.
const DefaultMaxOpenFiles = 256

// StagingLimit bounds what one call may stage in an overlay: Bytes of
// changed content (at least 4 KiB a path) and Paths changed paths
// (Policy.StagingLimit, Policy.MaxStagedPaths).
type StagingLimit struct {
	Bytes int64
	Paths int
}

// Defaults of a StagingLimit's zero fields.
const (
	DefaultStagingLimit   = 256 << 20
	DefaultMaxStagedPaths = 10000
)
