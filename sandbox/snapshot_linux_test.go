package sandbox

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitIdle waits until im keeps n memories.
func waitIdle(t *testing.T, im *idleMemories, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		im.mu.Lock()
		kept := len(im.mems)
		im.mu.Unlock()
		if kept >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle memories kept, want %d", kept, n)
		}
	}
}

// waitReusable waits until the memory of the call that just ended is
// reused or kept for reuse: it is kept once mapped whole, in the
// background, and the spare made after the call may take it at once, as
// it may take one more than the taken so far. It returns the memories
// taken by then.
func waitReusable(t *testing.T, im *idleMemories, taken int) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		im.mu.Lock()
		kept, now := len(im.mems), im.taken
		im.mu.Unlock()
		if kept > 0 || now > taken {
			return now
		}
		if time.Now().After(deadline) {
			t.Fatalf("no memory kept, and still %d taken", now)
		}
	}
}

// mappedMemory makes an image of b and the memory of one instance
// restored from it, reserving max bytes, with the image mapped; it skips
// the test where the image cannot be mapped.
func mappedMemory(t *testing.T, b []byte, max uint64) (*memoryImage, *reservedMemory) {
	t.Helper()
	img, err := newMemoryImage(b)
	must(t, err)
	a := img.allocator(false)
	mem := a.Allocate(0, max).(*reservedMemory)
	if !a.mapped() {
		t.Skip("the image could not be mapped here")
	}
	return img, mem
}

// A memory of an instance restored from an image is reused once the
// instance is closed, and holds the image again, and nothing past it.
func TestImageMemoryIsResetForReuse(t *testing.T) {
	image := bytes.Repeat([]byte{1, 2, 3, 4}, 4*osPage)
	const max = 1 << 20
	img, mem := mappedMemory(t, image, max)
	grown := mem.Reallocate(uint64(len(image)) + 4*osPage)
	grown[100], grown[len(image)+5] = 9, 7
	mem.Free()
	waitIdle(t, img.idle, 1)

	again := img.allocator(false)
	if got := again.Allocate(0, max).(*reservedMemory); got != mem || !again.mapped() {
		t.Fatal("the memory of a closed instance was not reused")
	}
	if !bytes.Equal(mem.mem[:len(image)], image) {
		t.Error("the reused memory does not hold the image")
	}
	if mem.committed != uint64(len(image)) {
		t.Errorf("the reused memory has %d bytes accessible, want the image's %d", mem.committed, len(image))
	}
	if grown := mem.Reallocate(uint64(len(image)) + 4*osPage); grown[len(image)+5] != 0 {
		t.Error("memory grown into again holds what the last instance wrote there")
	}
	mem.Free()
	waitIdle(t, img.idle, 1)

	other := img.allocator(false)
	if got := other.Allocate(0, 2*max).(*reservedMemory); got == mem {
		t.Error("a memory was reused for an instance of another memory limit")
	}
}

// An instance made just after another from the same image was closed
// gets the closed one's memory, though its pages are still being mapped
// in the background, rather than a second mapping of the image beside it.
func TestImageMemoryOnItsWayBackIsWaitedFor(t *testing.T) {
	image := bytes.Repeat([]byte{1, 2, 3, 4}, 256*osPage)
	const max = 1 << 24
	for try := range 20 {
		img, mem := mappedMemory(t, image, max)
		mem.Free()
		again := img.allocator(false)
		if got := again.Allocate(0, max).(*reservedMemory); got != mem {
			t.Fatalf("try %d: a new memory was mapped while the closed one was on its way back", try)
		}
		mem.Free()
		img.release()
	}
}

// Over many reuses of one memory, each writing other pages (some written
// before, some never, some past the image), every reset leaves exactly
// the image: pages written in an earlier use and not since are compared
// too.
func TestImageMemoryResetsEveryWrite(t *testing.T) {
	const pages = 64
	image := make([]byte, pages*osPage)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range image {
		image[i] = byte(rng.Uint32())
	}
	const max = 1 << 20
	img, mem := mappedMemory(t, image, max)
	for use := range 30 {
		grown := mem.Reallocate(uint64(len(image)) + 8*osPage)
		for range rng.IntN(8) {
			grown[rng.IntN(len(grown))] ^= byte(1 + rng.IntN(255))
		}
		mem.Free()
		waitIdle(t, img.idle, 1)
		again := img.allocator(false)
		if got := again.Allocate(0, max).(*reservedMemory); got != mem {
			t.Fatalf("use %d: the memory was not reused", use)
		}
		if !bytes.Equal(mem.mem[:len(image)], image) {
			t.Fatalf("use %d: the reset memory differs from the image", use)
		}
		if grown := mem.Reallocate(uint64(len(image)) + 8*osPage); slices.ContainsFunc(grown[len(image):], func(b byte) bool { return b != 0 }) {
			t.Fatalf("use %d: memory grown into again is not zero", use)
		}
	}
}

// Calls of a Go guest, each made in the memory an earlier one left once
// it is reset, find the memory they grow zero and their globals the
// snapshot's, whatever the calls before them wrote.
func TestPreinitCallsInReusedMemory(t *testing.T) {
	m, _ := preinitModules(t)
	p := Policy{Mounts: workspace(t)}
	probe(t, m, p, `{}`)
	idle := snapshotOf(t, m, p).image.idle
	taken := 0
	for i := range 6 {
		m.r.bg.Wait()
		taken = waitReusable(t, idle, taken)
		input := `{"fill":16}`
		if i%2 == 1 {
			input = `{"check":16}`
		}
		if out := probe(t, m, p, input); out.NonZero != 0 || out.Counter != 1 {
			t.Fatalf("call %d sees %d non-zero bytes of fresh memory and counter %d; want 0 and 1", i, out.NonZero, out.Counter)
		}
	}
	idle.mu.Lock()
	defer idle.mu.Unlock()
	if idle.taken == 0 {
		t.Error("no call was made in a reused memory")
	}
}

// Past maxIdle, the memories of closed instances are unmapped, not kept.
func TestIdleMemoriesAreBounded(t *testing.T) {
	img, err := newMemoryImage(bytes.Repeat([]byte{1}, 4*osPage))
	must(t, err)
	var mems []*reservedMemory
	for range maxIdle + 2 {
		a := img.allocator(false)
		mems = append(mems, a.Allocate(0, 1<<20).(*reservedMemory))
		if !a.mapped() {
			t.Skip("the image could not be mapped here")
		}
	}
	for _, m := range mems {
		m.Free()
	}
	waitIdle(t, img.idle, maxIdle)
	time.Sleep(50 * time.Millisecond) // the others' goroutines end
	img.idle.mu.Lock()
	defer img.idle.mu.Unlock()
	if n := len(img.idle.mems); n != maxIdle {
		t.Errorf("%d idle memories kept, want %d", n, maxIdle)
	}
}

// The page table tells the pages of a mapped image an instance wrote from
// those it only read or never touched, so that a reset compares those
// alone.
func TestWrittenPagesAreThoseWritten(t *testing.T) {
	image := bytes.Repeat([]byte{5}, 8*osPage)
	_, mem := mappedMemory(t, image, 1<<20)
	defer mem.Free()
	_ = mem.mem[3*osPage+1] + mem.mem[6*osPage]   // read
	mem.mem[2*osPage+7], mem.mem[5*osPage] = 1, 5 // written, the second with the byte it held
	written := writtenPages(mem.mem[:len(image)])
	if written == nil {
		if pagemap(mem.mem[:len(image)]) != nil {
			t.Fatal("the page table can be read, but its check says it does not tell written pages")
		}
		t.Skip("the page table cannot be read here")
	}
	for i, w := range written {
		if want := i == 2 || i == 5; w != want {
			t.Errorf("page %d: written %v, want %v", i, w, want)
		}
	}
}

// An instance that reads the real clock gets every page of the image as
// its memory's own, in a new memory and in a reused one, so that how fast
// a first write answers tells nothing of earlier calls; and the memory
// still holds the image.
func TestTimedInstanceOwnsEveryPage(t *testing.T) {
	image := bytes.Repeat([]byte{1, 2, 3, 4}, 4*osPage)
	img, err := newMemoryImage(image)
	must(t, err)
	for _, reused := range []bool{false, true} {
		if reused {
			plain := img.allocator(false)
			m := plain.Allocate(0, 1<<20).(*reservedMemory)
			m.mem[osPage] = 9
			m.Free()
			waitIdle(t, img.idle, 1)
		}
		a := img.allocator(true)
		mem := a.Allocate(0, 1<<20).(*reservedMemory)
		if !a.mapped() {
			t.Skip("the image could not be mapped here")
		}
		if reused != (img.idle.taken == 1) {
			t.Fatalf("reused %v, but %d memories were taken", reused, img.idle.taken)
		}
		written := writtenPages(mem.mem[:len(image)])
		if written == nil || !populateWriteWorks() {
			t.Skip("the page table cannot be read, or pages made one's own, here")
		}
		for i, w := range written {
			if !w {
				t.Errorf("reused %v: page %d is still the image's", reused, i)
			}
		}
		if !bytes.Equal(mem.mem[:len(image)], image) {
			t.Errorf("reused %v: the memory does not hold the image", reused)
		}
		mem.Free()
		waitIdle(t, img.idle, 1)
		img.idle.drain()
	}
}

// The spare made for a policy granting the real clock has every page of
// the image as its memory's own; one for the fixed clock shares the pages
// no call wrote with the snapshot.
func TestPreinitTimedSpareOwnsItsMemory(t *testing.T) {
	m, _ := preinitModules(t)
	for _, realClock := range []bool{false, true} { // fixed first: a memory, once its own, stays so
		p := Policy{Mounts: workspace(t), RealClock: realClock}
		probe(t, m, p, `{}`)
		m.r.bg.Wait()
		snap := snapshotOf(t, m, p)
		spare := snap.spares.take(spareKeyOf(p))
		snap.spares.done(spareKeyOf(p))
		if spare == nil {
			t.Fatal("no spare was made")
		}
		view, _ := spare.mod.Memory().Read(0, uint32(len(snap.image.bytes())))
		written := writtenPages(view)
		spare.mod.Close(context.Background())
		if written == nil {
			t.Skip("the page table cannot be read here")
		}
		own := 0
		for _, w := range written {
			if w {
				own++
			}
		}
		if realClock && own != len(written) {
			t.Errorf("real clock: %d of %d pages are the memory's own, want all", own, len(written))
		}
		if !realClock && own == len(written) {
			t.Errorf("fixed clock: all %d pages are the memory's own, want those calls wrote", own)
		}
	}
}

// populateWriteWorks tells whether the kernel makes pages a mapping's own
// on request (MADV_POPULATE_WRITE, Linux 5.14).
func populateWriteWorks() bool {
	b, err := unix.Mmap(-1, 0, osPage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return false
	}
	defer unix.Munmap(b)
	return unix.Madvise(b, unix.MADV_POPULATE_WRITE) == nil
}
