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
	"syscall"
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
// (idle) and reset for a later instance: every page of the image mapped,
// every page that differs from the image copied back from it, and what
// grew past the image dropped. An instance in a reset memory starts with
// exactly the image's bytes, like one in a new mapping, and faults only on
// a page no earlier instance in the memory wrote.
//
// Only a page some instance wrote can differ from the image: every other
// page is still the memfd's, which is sealed. The page table tells which
// are which (see writtenPages), so a reset compares a call's worth of
// pages, not the whole image; comparing all of it would read twice the
// image through the CPU's caches, and the next call would find them cold.
//
// A call that reads the real clock could time its first write to a page
// and tell whether earlier calls in the memory wrote it. An instance
// granted the real clock therefore gets every page of the image as the
// memory's own (see imageAllocator), so that every page answers alike.
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
	img := &memoryImage{fd: fd, idle: newIdleMemories(uint64(len(b)))}
	runtime.AddCleanup(img, func(fd int) { unix.Close(fd) }, fd)
	runtime.AddCleanup(img, (*idleMemories).close, img.idle)
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
	written := writtenPages(m.mem[:size]) // nil: unknown, so every page is compared
	for off := uint64(0); off < size; off += osPage {
		if written != nil && !written[off/osPage] {
			continue
		}
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

// maxIdle bounds the idle memories kept for one image, each mapping the
// whole image and owning the pages calls wrote (all of them, once a timed
// instance used it). One call after another needs one: a call's memory is
// reset for the spare of the next as soon as the call ends. Calls that
// run at once leave one each, for the spares made after them (see
// maxSparesPerKey); past that, the extra are unmapped.
const maxIdle = maxSparesPerKey

// idleMemories are the memories of closed instances restored from one
// image (of size bytes), to be reset and reused.
type idleMemories struct {
	size  uint64
	mu    sync.Mutex
	mems  []*reservedMemory
	taken int  // memories reused, for tests
	gone  bool // closed: no memory is kept any more
	// coming counts the memories put but not kept yet (their pages being
	// mapped), and back is signalled as each is kept or unmapped.
	coming int
	back   *sync.Cond
}

func newIdleMemories(size uint64) *idleMemories {
	im := &idleMemories{size: size}
	im.back = sync.NewCond(&im.mu)
	return im
}

// put keeps m, or unmaps it if enough are kept. A memory kept for the
// first time has every page of the image mapped first, in the background,
// so that no later instance faults to read one (before Linux 5.14 the
// kernel cannot, and the pages fault in as touched).
func (im *idleMemories) put(m *reservedMemory) {
	if m.populated {
		im.keep(m, false)
		return
	}
	im.mu.Lock()
	im.coming++
	im.mu.Unlock()
	go func() {
		m.populated = unix.Madvise(m.mem[:im.size], unix.MADV_POPULATE_READ) == nil
		im.keep(m, true)
	}()
}

// keep adds m to the idle memories, or unmaps it if enough are kept; in a
// goroutine of its own, since keep runs as a call closes its instance and
// unmapping a resident memory takes a while. coming is a memory put counts
// as on its way back.
func (im *idleMemories) keep(m *reservedMemory, coming bool) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if coming {
		im.coming--
		im.back.Broadcast()
	}
	if !im.gone && len(im.mems) < maxIdle {
		im.mems = append(im.mems, m)
		return
	}
	go unmapReserved(m)
}

// take returns an idle memory reserving max bytes, or nil. A memory on
// its way back (see put) is waited for, a fraction of a millisecond,
// rather than a new one mapped beside it: the instance made just after
// a call, or just after the snapshot's pages were learnt, would otherwise
// map the whole image a second time.
func (im *idleMemories) take(max uint64) *reservedMemory {
	im.mu.Lock()
	defer im.mu.Unlock()
	for {
		for i, m := range im.mems {
			if uint64(len(m.mem)) == max {
				im.mems = slices.Delete(im.mems, i, i+1)
				im.taken++
				return m
			}
		}
		if im.coming == 0 || im.gone {
			return nil
		}
		im.back.Wait()
	}
}

// release unmaps the image's idle memories, for an image no call will
// be restored from again (see Runtime.Trim). Its memfd and view go with
// the last reference to it: a call that began before may still map them.
func (img *memoryImage) release() { img.idle.close() }

// drain unmaps every idle memory.
func (im *idleMemories) drain() {
	im.mu.Lock()
	defer im.mu.Unlock()
	for _, m := range im.mems {
		unmapReserved(m)
	}
	im.mems = nil
}

// close drains the idle memories, and unmaps any put later instead of
// keeping it: the image is gone, or no call will be restored from it again.
func (im *idleMemories) close() {
	im.mu.Lock()
	im.gone = true
	im.mu.Unlock()
	im.drain()
}

// unmapReserved unmaps m's reservation. It was mapped by the syscall
// package, whose Munmap is the one that knows the mapping (x/sys/unix's
// refuses a mapping it did not make).
func unmapReserved(m *reservedMemory) { syscall.Munmap(m.mem) }

// imageAllocator makes the one memory of one instance restored from img.
type imageAllocator struct {
	img   *memoryImage
	mem   *reservedMemory
	ok    bool // img's bytes are in mem
	timed bool // the instance reads the real clock: see memoryImage
}

func (img *memoryImage) allocator(timed bool) *imageAllocator {
	return &imageAllocator{img: img, timed: timed}
}

// Allocate returns an idle memory of img, reset, or else reserves max
// bytes like the sandbox's allocator and maps the image over their start.
// If either fails, the memory is an ordinary one and restore copies the
// image into it.
func (a *imageAllocator) Allocate(cap, max uint64) experimental.LinearMemory {
	if m := a.img.idle.take(max); m != nil {
		a.img.reset(m)
		a.mem, a.ok = m, true
		a.own()
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
	if a.own() {
		return a.mem
	}
	// Before Linux 5.14 these fail, and the pages fault in as touched.
	for _, r := range a.img.read {
		unix.Madvise(a.mem.mem[r.off:r.off+r.len], unix.MADV_POPULATE_READ)
	}
	for _, r := range a.img.hot {
		unix.Madvise(a.mem.mem[r.off:r.off+r.len], unix.MADV_POPULATE_WRITE)
	}
	return a.mem
}

// own makes every page of the image the memory's own, once, for a timed
// instance, and tells whether they are.
func (a *imageAllocator) own() bool {
	m := a.mem
	if a.timed && !m.private {
		m.private = unix.Madvise(m.mem[:len(a.img.view)], unix.MADV_POPULATE_WRITE) == nil
		m.populated = m.populated || m.private
	}
	return m.private
}

func (a *imageAllocator) mapped() bool { return a.ok }

func (a *imageAllocator) alloc() experimental.MemoryAllocator { return a }

var _ experimental.MemoryAllocator = (*imageAllocator)(nil)

// residentPages tells, for each page of mem, whether it is in this
// process's page table (a page the process touched since it mapped mem,
// or one the kernel mapped along with it). Nil when that cannot be read.
func residentPages(mem []byte) []bool {
	return pagesWhere(mem, func(e uint64) bool { return e&pmPresent != 0 })
}

// writtenPages tells, for each page of mem, a private mapping of a file,
// whether it may differ from the file: whether it is a page of the
// process's own (the kernel's copy of the file's page at the first write)
// rather than the file's, or not known to be the file's. A page not in
// the page table at all is read from the file when next touched. Nil when
// the page table cannot be read.
func writtenPages(mem []byte) []bool {
	if !pagemapTellsWrites() {
		return nil
	}
	return pagesWhere(mem, func(e uint64) bool {
		return e&pmFile == 0 && e&(pmPresent|pmSwapped) != 0
	})
}

// pagemapTellsWrites tells whether the page table says which pages of a
// private mapping of a file were written, as writtenPages reads it. It is
// found out once, on a mapping of its own: where /proc answers otherwise
// (an emulated kernel, say), a reset must compare every page, since a page
// wrongly taken for the file's would carry one call's bytes to the next.
var pagemapTellsWrites = sync.OnceValue(func() bool {
	fd, err := unix.MemfdCreate("cairn-pagemap-check", unix.MFD_CLOEXEC)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if _, err := unix.Pwrite(fd, bytes.Repeat([]byte{1}, 3*osPage), 0); err != nil {
		return false
	}
	mem, err := unix.Mmap(fd, 0, 3*osPage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return false
	}
	defer unix.Munmap(mem)
	mem[2*osPage] = mem[osPage] + 1 // page 1 read, page 2 written, page 0 untouched
	e := pagemap(mem)
	if len(e) != 3 {
		return false
	}
	readIsFiles := e[1]&pmPresent != 0 && e[1]&pmFile != 0
	writtenIsOwn := e[2]&pmPresent != 0 && e[2]&pmFile == 0
	return readIsFiles && writtenIsOwn && mem[2*osPage] == 2
})

// pagesWhere tells, for each page of mem, whether its entry in this
// process's page table (see pagemap) has a property. Nil when the page
// table cannot be read.
func pagesWhere(mem []byte, has func(entry uint64) bool) []bool {
	entries := pagemap(mem)
	if entries == nil {
		return nil
	}
	pages := make([]bool, len(entries))
	for i, e := range entries {
		pages[i] = has(e)
	}
	return pages
}

// Bits of a pagemap entry (the kernel's Documentation/admin-guide/mm/pagemap.rst).
const (
	pmPresent = 1 << 63 // in memory
	pmSwapped = 1 << 62 // swapped out
	pmFile    = 1 << 61 // a page of a file (or shared anonymous memory), not the process's own
)

// pagemap returns the entries of mem's pages in this process's page table,
// from /proc/self/pagemap, or nil when they cannot be read.
func pagemap(mem []byte) []uint64 {
	f := pagemapFile()
	if f == nil || len(mem) == 0 {
		return nil
	}
	n := len(mem) / osPage
	raw := make([]byte, 8*n)
	first := uintptr(unsafe.Pointer(&mem[0])) / osPage
	if _, err := f.ReadAt(raw, int64(first*8)); err != nil {
		return nil
	}
	entries := make([]uint64, n)
	for i := range entries {
		entries[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return entries
}

// pagemapFile is /proc/self/pagemap, opened once and kept; nil when it
// cannot be opened.
var pagemapFile = sync.OnceValue(func() *os.File {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return nil
	}
	return f
})
