package sandbox

import (
	"math"
	"runtime/debug"
	"testing"
)

// Under a cgroup memory limit the Go runtime gets a soft limit below it,
// leaving room for what the runtime does not count; GOMEMLIMIT, when set,
// is left alone; and the soft limit cairn derives does not lower the
// limit the engine's choice reads.
func TestSoftMemoryLimitUnderCgroup(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old); ownSoftLimit.Store(0) })
	for _, c := range []struct{ limit, want int64 }{
		{128 << 20, 96 << 20},
		{1 << 30, 768 << 20},
		{64 << 20, 32 << 20},
		{48 << 20, 24 << 20},
	} {
		if got := softLimitFor(c.limit); got != c.want {
			t.Errorf("softLimitFor(%d MiB) = %d MiB, want %d MiB", c.limit>>20, got>>20, c.want>>20)
		}
	}

	fakeCgroups(t, "0::/a\n", map[string]string{"a/memory.max": "134217728\n"})
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	if got := SetSoftMemoryLimit(); got != 96<<20 {
		t.Fatalf("SetSoftMemoryLimit() = %d, want %d", got, 96<<20)
	}
	if got := debug.SetMemoryLimit(-1); got != 96<<20 {
		t.Errorf("the runtime's soft limit is %d, want %d", got, 96<<20)
	}
	if got, ok := processMemoryLimit(); !ok || got != 128<<20 {
		t.Errorf("processMemoryLimit() = %d, %v; want the cgroup's %d, not the soft limit derived from it", got, ok, 128<<20)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	ownSoftLimit.Store(0)
	t.Setenv("GOMEMLIMIT", "200MiB")
	if got := SetSoftMemoryLimit(); got != 0 {
		t.Errorf("with GOMEMLIMIT set, SetSoftMemoryLimit() = %d, want 0 (left alone)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the runtime's soft limit became %d", got)
	}

	fakeCgroups(t, "0::/a\n", map[string]string{"a/memory.max": "max\n"})
	t.Setenv("GOMEMLIMIT", "")
	if got := SetSoftMemoryLimit(); got != 0 || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Errorf("without a cgroup limit, SetSoftMemoryLimit() = %d and the runtime's limit %d; want none", got, debug.SetMemoryLimit(-1))
	}
}
