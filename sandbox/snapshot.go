package sandbox

import (
	"bytes"
	"fmt"

	"github.com/tetratelabs/wazero/api"
)

// snapshot is a fast-mode module's state right after its initialisation:
// its linear memory and the values of its mutable globals (all of them:
// the rewrite exports every one, see wasmcode.Reactor). Restoring both into a new
// instance of the same compiled module gives an instance in the state the
// initialised one was in. The rest of an instance is not in a snapshot and
// needs not be: functions, immutable globals and the table's contents come
// from the module, and everything WASI (arguments, environment, clocks,
// randomness, stdio and open files) belongs to the new instance. A module
// whose initialisation changed its table would not be restored faithfully;
// a Go module's table never changes.
//
// A snapshot is immutable and safe for concurrent use, but for its
// spares, which have a lock of their own.
type snapshot struct {
	pages         uint32
	globals       []snapshotGlobal
	clockReadings int64 // of the deterministic clock, see detClock
	image         *memoryImage
	spares        spares
}

type snapshotGlobal struct {
	name  string
	value uint64
}

// newSnapshot captures mod, an initialised instance.
func newSnapshot(mod api.Module, globals []string, clockReadings int64) (*snapshot, error) {
	s := &snapshot{pages: mod.Memory().Size() / 65536, clockReadings: clockReadings}
	for _, name := range globals {
		g := mod.ExportedGlobal(name)
		if g == nil {
			return nil, fmt.Errorf("snapshot: no global %s", name)
		}
		s.globals = append(s.globals, snapshotGlobal{name, g.Get()})
	}
	b, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		return nil, fmt.Errorf("snapshot: cannot read memory")
	}
	img, err := newMemoryImage(b)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s.image = img
	return s, nil
}

// memory returns the memory allocator of one instance restored from s;
// pass it to restore. timed is an instance that reads the real clock (see
// memoryImage).
func (s *snapshot) memory(timed bool) *imageAllocator { return s.image.allocator(timed) }

// restore puts s into mod, a new instance of the module s was taken of,
// instantiated with the allocator a from s.memory: its memory grows to
// the snapshot's size, the snapshot's bytes are in it (already, when the
// allocator could map them, otherwise copied now), and its mutable
// globals get the snapshot's values.
func (s *snapshot) restore(mod api.Module, a *imageAllocator) error {
	mem := mod.Memory()
	if cur := mem.Size() / 65536; cur < s.pages {
		if _, ok := mem.Grow(s.pages - cur); !ok {
			return fmt.Errorf("%w: restoring a snapshot of %d pages", ErrMemoryLimit, s.pages)
		}
	} else if cur > s.pages {
		return fmt.Errorf("snapshot of %d pages is smaller than a new instance's %d", s.pages, cur)
	}
	if !a.mapped() && !mem.Write(0, s.image.bytes()) {
		return fmt.Errorf("snapshot: cannot write memory")
	}
	for _, g := range s.globals {
		mg, ok := mod.ExportedGlobal(g.name).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("snapshot: global %s is not mutable", g.name)
		}
		mg.Set(g.value)
	}
	return nil
}

// pageRange is a run of memory pages, in bytes.
type pageRange struct{ off, len uint64 }

// osPage is the page size written pages are counted in.
const osPage = 4096

// usedPages compares mem, the memory of an instance restored from s that
// has run, with the snapshot, and returns the runs of pages within the
// snapshot's size that it changed (written) and those it only read, as far
// as the page table tells (see residentPages; nil where it cannot).
//
// Only a page the page table does not know to be still the image's is
// compared (see writtenPages), so that the image's own mapping is read
// for the few pages the call wrote and not made resident whole.
func (s *snapshot) usedPages(mem []byte) (read, written []pageRange) {
	img := s.image.bytes()
	n := uint64(min(len(img), len(mem))) / osPage * osPage
	resident, own := residentPages(mem[:n]), writtenPages(mem[:n])
	for off := uint64(0); off < n; off += osPage {
		switch {
		case (own == nil || own[off/osPage]) && !bytes.Equal(img[off:off+osPage], mem[off:off+osPage]):
			written = appendPage(written, off)
		case resident != nil && resident[off/osPage]:
			read = appendPage(read, off)
		}
	}
	return read, written
}

// appendPage adds the page at off, past every page in runs, to runs.
func appendPage(runs []pageRange, off uint64) []pageRange {
	if n := len(runs); n > 0 && runs[n-1].off+runs[n-1].len == off {
		runs[n-1].len += osPage
		return runs
	}
	return append(runs, pageRange{off, osPage})
}
