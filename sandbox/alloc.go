package sandbox

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is what backs a guest's linear memory. wazero's own
// grows a Go slice by appending, so a guest that grows its memory a page at
// a time makes the host copy it again and again and leaves the old copies
// to the garbage collector: under a memory bomb at a 64 MiB limit the
// host's resident memory reached several times the limit. Where the
// platform allows (see alloc_linux.go), the allocator reserves the
// memory's maximum once as address space and commits pages as the guest
// grows, so nothing is ever copied and the host holds at most the limit.
//
// newMemoryAllocator returns nil where there is no such allocator, and
// wazero's own is used. Measured figures are in docs/threat-model.md.
func newMemoryAllocator() experimental.MemoryAllocator { return platformAllocator() }
