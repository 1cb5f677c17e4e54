package sandbox

import (
	"os"
	"runtime/debug"
	"sync/atomic"
)

// ownSoftLimit is the soft memory limit SetSoftMemoryLimit gave the Go
// runtime, 0 if none: processMemoryLimit reads past it to the cgroup's.
var ownSoftLimit atomic.Int64

// SetSoftMemoryLimit gives the Go runtime a soft memory limit below this
// process's cgroup memory limit, unless GOMEMLIMIT is set, and returns it
// (0 when it set none). Without one, the collector lets the heap grow to
// twice what is live before it collects, so an agent whose conversation
// holds 50 MiB is killed by a limit of 128 MiB that what it keeps would
// fit; with one, the collector works harder as the heap nears the limit
// instead. The limit leaves a quarter of the cgroup's, and at least 32
// MiB, to what the Go runtime does not count (the binary's pages, modules'
// machine code, the guests' memories, files' pages in the cache), and
// takes at least half of it.
func SetSoftMemoryLimit() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	limit, ok := cgroupMemoryLimit()
	if !ok {
		return 0
	}
	soft := softLimitFor(limit)
	ownSoftLimit.Store(soft)
	debug.SetMemoryLimit(soft)
	return soft
}

// softLimitFor is the soft memory limit SetSoftMemoryLimit sets under a
// cgroup memory limit.
func softLimitFor(limit int64) int64 {
	return max(limit/2, min(limit/4*3, limit-32<<20))
}
