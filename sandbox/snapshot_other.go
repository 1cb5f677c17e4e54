//go:build !linux

package sandbox

import "github.com/tetratelabs/wazero/experimental"

// memoryImage is a snapshot's memory. Off Linux an instance restored from
// it gets a copy.
type memoryImage struct{ b []byte }

func newMemoryImage(b []byte) (*memoryImage, error) { return &memoryImage{b: b}, nil }

func (img *memoryImage) bytes() []byte { return img.b }

// prefault does nothing: a copy has no pages to fault.
func (img *memoryImage) prefault(read, written []pageRange) {}

// residentPages is nil: only Linux tells.
func residentPages([]byte) []bool { return nil }

// writtenPages is nil: only Linux tells.
func writtenPages([]byte) []bool { return nil }

// imageAllocator is wazero's own allocator: restore copies the image.
type imageAllocator struct{}

func (img *memoryImage) allocator(timed bool) *imageAllocator { return &imageAllocator{} }

func (a *imageAllocator) alloc() experimental.MemoryAllocator { return nil }

func (a *imageAllocator) mapped() bool { return false }

// release does nothing: the copy goes with the image.
func (img *memoryImage) release() {}
