//go:build linux

package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryImage is a snapshot's memory in a sealed memfd. The first
// instance restored into a memory maps the memfd privately over the start
// of its reservation (see reservedMemory): nothing is copied when the
// instance is made, pages the call only reads are the memfd's, and a page
// it writes is copied for it alone by the kernel on the first write.
//
// A fault costs microseconds, far more in a virtual machine whose host
// backs its memory lazily, and a call of a Go tool touches hundreds of
// pages. So the memory of a closed instance is not unmapped but kept
// (idle) and reset for a later instance: every page of the image made the
// memory's own and resident, every page that differs from the image copied
// back from it, and what grew past the image dropped. An instance in a
// reset memory starts with exactly the image's bytes, like one in a new
// mapping, and faults on none of them; and since every page is resident
// whatever earlier calls did, how fast a page is touched tells a call
// nothing of them.
type memoryImage struct {
	fd   int
	view []byte      // the memfd mapped read-only: the bytes, for copying
	read []pageRange // pages a call likely reads, see prefault
	hot  []pageRange // pages a call likely writes
	idle *idleMemories
}

func newMemoryImage(b []byte) (*memoryImage, error) {
	fd, err := unix.MemfdCreate("cairn-snapshot", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd: %w", err)
	}
	img := &memoryImage{fd: fd, idle: &idleMemories{size: uint64(len(b))}}
	runtime.AddCleanup(img, func(fd int) { unix.Close(fd) }, fd)
	runtime.AddCleanup(img, (*idleMemories).drain, img.idle)
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

// prefault names the pages an instance restored from img into a new
// mapping will likely read and write; Allocate maps the first and copies
// the second for it up front, in one call of the kernel per run of pages
// instead of one fault per page. Call it before img is used.
func (img *memoryImage) prefault(read, written []pageRange) { img.read, img.hot = read, written }

// reset makes m, an idle memory of img, hold the image's bytes and
// nothing past them.
func (img *memoryImage) reset(m *reservedMemory) {
	size := uint64(len(img.view))
	for off := uint64(0); off < size; off += osPage {
		if page := m.mem[off : off+osPage]; !bytes.Equal(page, img.view[off:off+osPage]) {
			copy(page, img.view[off:off+osPage])
		}
	}
	if m.committed > size {
		// Zero when next touched, and out of reach until grown into.
		unix.Madvise(m.mem[size:m.committed], unix.MADV_DONTNEED)
		unix.Mprotect(m.mem[size:m.committed], unix.PROT_NONE)
		m.committed = size
	}
}

// maxIdle bounds the idle memories kept for one image, each as large as
// the image and resident. One call after another needs one: a call's
// memory is reset for the spare of the next as soon as the call ends.
// Calls that run at once leave more, and the extra are unmapped.
const maxIdle = 2

// idleMemories are the memories of closed instances restored from one
// image (of size bytes), to be reset and reused.
type idleMemories struct {
	size  uint64
	mu    sync.Mutex
	mems  []*reservedMemory
	taken int // memories reused, for tests
}

// put keeps m, or unmaps it if enough are kept. A memory kept for the
// first time has every page of the image made its own and resident
// first, in the background: the kernel copies each page the instance did
// not write (before Linux 5.14 it cannot, and those pages stay the
// memfd's).
func (im *idleMemories) put(m *reservedMemory) {
	if m.private {
		im.keep(m)
		return
	}
	go func() {
		m.private = unix.Madvise(m.mem[:im.size], unix.MADV_POPULATE_WRITE) == nil
		im.keep(m)
	}()
}

// keep adds m to the idle memories, or unmaps it if enough are kept; in a
// goroutine of its own, since keep runs as a call closes its instance and
// unmapping a resident memory takes a while.
func (im *idleMemories) keep(m *reservedMemory) {
	im.mu.Lock()
	if len(im.mems) < maxIdle {
		im.mems = append(im.mems, m)
		im.mu.Unlock()
		return
	}
	im.mu.Unlock()
	go unix.Munmap(m.mem)
}

// take returns an idle memory reserving max bytes, or nil.
func (im *idleMemories) take(max uint64) *reservedMemory {
	im.mu.Lock()
	defer im.mu.Unlock()
	for i, m := range im.mems {
		if uint64(len(m.mem)) == max {
			im.mems = slices.Delete(im.mems, i, i+1)
			im.taken++
			return m
		}
	}
	return nil
}

// drain unmaps every idle memory: the image is gone.
func (im *idleMemories) drain() {
	im.mu.Lock()
	defer im.mu.Unlock()
	for _, m := range im.mems {
		unix.Munmap(m.mem)
	}
	im.mems = nil
}

// imageAllocator makes the one memory of one instance restored from img.
type imageAllocator struct {
	img *memoryImage
	mem *reservedMemory
	ok  bool // img's bytes are in mem
}

func (img *memoryImage) allocator() *imageAllocator { return &imageAllocator{img: img} }

// Allocate returns an idle memory of img, reset, or else reserves max
// bytes like the sandbox's allocator and maps the image over their start.
// If either fails, the memory is an ordinary one and restore copies the
// image into it.
func (a *imageAllocator) Allocate(cap, max uint64) experimental.LinearMemory {
	if m := a.img.idle.take(max); m != nil {
		a.img.reset(m)
		a.mem, a.ok = m, true
		return m
	}
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
	a.mem.recycle = a.img.idle.put
	// Before Linux 5.14 these fail, and the pages fault in as touched.
	for _, r := range a.img.read {
		unix.Madvise(a.mem.mem[r.off:r.off+r.len], unix.MADV_POPULATE_READ)
	}
	for _, r := range a.img.hot {
		unix.Madvise(a.mem.mem[r.off:r.off+r.len], unix.MADV_POPULATE_WRITE)
	}
	return a.mem
}

func (a *imageAllocator) mapped() bool { return a.ok }

func (a *imageAllocator) alloc() experimental.MemoryAllocator { return a }

var _ experimental.MemoryAllocator = (*imageAllocator)(nil)

// residentPages tells, for each page of mem, whether it is in this
// process's page table (a page the process touched since it mapped mem,
// or one the kernel mapped along with it), from /proc/self/pagemap. Nil
// when that cannot be read.
func residentPages(mem []byte) []bool {
	if len(mem) == 0 {
		return nil
	}
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil
	}
	defer f.Close()
	n := len(mem) / osPage
	entries := make([]byte, 8*n)
	first := uintptr(unsafe.Pointer(&mem[0])) / osPage
	if _, err := f.ReadAt(entries, int64(first*8)); err != nil {
		return nil
	}
	resident := make([]bool, n)
	for i := range resident {
		resident[i] = binary.LittleEndian.Uint64(entries[8*i:])&(1<<63) != 0
	}
	return resident
}
