//go:build !linux

package sandbox

import "github.com/tetratelabs/wazero/experimental"

// platformAllocator is nil off Linux: wazero's own allocator is used.
func platformAllocator() experimental.MemoryAllocator { return nil }
