//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryImage is a snapshot's memory in a sealed memfd. An instance
// restored from it maps the memfd privately over the start of its
// reservation (see reservedMemory): nothing is copied when the instance is
// made, pages the call only reads are the memfd's, shared by every
// instance, and a page it writes is copied for it alone by the kernel on
// the first write.
type memoryImage struct {
	fd   int
	view []byte // the memfd mapped read-only: the bytes, for copying
	hot  []pageRange
}

func newMemoryImage(b []byte) (*memoryImage, error) {
	fd, err := unix.MemfdCreate("cairn-snapshot", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	img := &memoryImage{fd: fd}
	runtime.AddCleanup(img, func(fd int) { unix.Close(fd) }, fd)
	for off := 0; off < len(b); {
		n, err := unix.Pwrite(fd, b[off:], int64(off))
		if err != nil {
			return nil, fmt.Errorf("memfd: %w", err)
		}
		off += n
	}
	unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL)
	if len(b) > 0 {
		if img.view, err = unix.Mmap(fd, 0, len(b), unix.PROT_READ, unix.MAP_SHARED); err != nil {
			return nil, fmt.Errorf("map memfd: %w", err)
		}
		runtime.AddCleanup(img, func(v []byte) { unix.Munmap(v) }, img.view)
	}
	return img, nil
}

func (img *memoryImage) bytes() []byte { return img.view }

// prefault names the pages an instance restored from img will likely
// write, which Allocate copies for it up front. Call it before img is used.
func (img *memoryImage) prefault(hot []pageRange) { img.hot = hot }

// imageAllocator makes the one memory of one instance restored from img.
type imageAllocator struct {
	img *memoryImage
	mem *reservedMemory
	ok  bool // img is mapped into mem
}

func (img *memoryImage) allocator() *imageAllocator { return &imageAllocator{img: img} }

// Allocate reserves max bytes like the sandbox's allocator and maps the
// image over their start. If either fails, the memory is an ordinary
// one and restore copies the image into it.
func (a *imageAllocator) Allocate(cap, max uint64) experimental.LinearMemory {
	a.mem = allocateReserved(cap, max).(*reservedMemory)
	size := uint64(len(a.img.view))
	if !a.mem.reserved || size == 0 || size > uint64(len(a.mem.mem)) {
		return a.mem
	}
	_, err := unix.MmapPtr(a.img.fd, 0, unsafe.Pointer(&a.mem.mem[0]), uintptr(size),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED)
	if err != nil {
		return a.mem
	}
	a.mem.committed, a.ok = size, true
	for _, r := range a.img.hot {
		// One call of the kernel copies every page of the range, instead
		// of one fault per page as the guest writes them. Before Linux
		// 5.14 this fails, and the pages fault in as they are written.
		unix.Madvise(a.mem.mem[r.off:r.off+r.len], unix.MADV_POPULATE_WRITE)
	}
	return a.mem
}

func (a *imageAllocator) mapped() bool { return a.ok }

func (a *imageAllocator) alloc() experimental.MemoryAllocator { return a }

var _ experimental.MemoryAllocator = (*imageAllocator)(nil)
