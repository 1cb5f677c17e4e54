//go:build linux

package sandbox

import (
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

func platformAllocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(allocateReserved)
}

// reservedMemory is a linear memory whose maximum is reserved as address
// space up front (PROT_NONE, MAP_NORESERVE: no memory and no swap is
// accounted for it) and made accessible as it grows. Its bytes never
// move. Pages the guest never touches are never resident.
type reservedMemory struct {
	mem       []byte // the whole reservation
	committed uint64 // bytes made readable and writable
	fallback  []byte // used instead when the reservation failed
	reserved  bool
	recycle   func(*reservedMemory) // takes the memory at Free, if set
	populated bool                  // every page of the image it holds is mapped; see idleMemories.put
	private   bool                  // and its own; see imageAllocator.own
}

// allocateReserved reserves max bytes. If the kernel refuses (a small
// address space, a ulimit -v), the memory falls back to a Go slice.
func allocateReserved(_, max uint64) experimental.LinearMemory {
	if max == 0 || max > 1<<32 {
		return &reservedMemory{}
	}
	mem, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return &reservedMemory{}
	}
	return &reservedMemory{mem: mem, reserved: true}
}

// Reallocate grows the memory to size bytes, or returns nil (the guest's
// memory.grow then fails) when size is past the reservation.
func (m *reservedMemory) Reallocate(size uint64) []byte {
	if !m.reserved {
		return m.growFallback(size)
	}
	if size > uint64(len(m.mem)) {
		return nil
	}
	if size > m.committed {
		if err := syscall.Mprotect(m.mem[m.committed:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.committed = size
	}
	return m.mem[:size:size]
}

func (m *reservedMemory) growFallback(size uint64) []byte {
	if size > uint64(cap(m.fallback)) {
		grown := make([]byte, size, max(size, 2*uint64(cap(m.fallback))))
		copy(grown, m.fallback)
		m.fallback = grown
	}
	m.fallback = m.fallback[:size]
	return m.fallback[:size:size]
}

// Free returns the reservation to the kernel, or hands it to be reused
// when its maker set recycle. wazero calls it once, when the instance is
// closed and no guest code runs in it any more. Unmapping
// a memory the guest wrote to takes a while (every page it wrote is freed),
// so it is done in a goroutine of its own, not on the call's path.
func (m *reservedMemory) Free() {
	if m.reserved && m.recycle != nil {
		m.recycle(m)
		return
	}
	if m.reserved {
		go syscall.Munmap(m.mem)
		m.mem, m.reserved = nil, false
	}
	m.fallback = nil
}
