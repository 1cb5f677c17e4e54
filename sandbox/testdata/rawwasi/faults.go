package main

import (
	"unsafe"
)

// faults calls the functions that act and then write an answer with the
// answer's pointer, or an iovec, past the end of memory, under /work
// (holding inside.txt and lsub, a link to sub), and prints the errno of
// each and what the call did anyway: the bytes of the file written,
// where a file's offset went, what a buffer holds.
func faults() {
	size := uint32(wasmMemorySize()) * 65536
	past := size - 2
	ptr := func(p unsafe.Pointer) uint32 { return uint32(uintptr(p)) }
	data := []byte("leak")
	good := [2]uint32{ptr(unsafe.Pointer(&data[0])), 4}
	bad := [4]uint32{good[0], good[1], size - 1, 10}
	w, _ := open(3, "written.txt", oflagCreat, rightFdRead|rightFdWrite|rightFdSeek|1<<5, 0)
	content := func() string {
		f, _ := open(3, "written.txt", 0, rightFdRead, 0)
		s, _ := read(f)
		fdClose(f)
		return "[" + s + "]"
	}
	say("fault-write-nwritten", fdWriteAt(w, ptr(unsafe.Pointer(&good)), 1, past), content())
	say("fault-write-iovec", fdWriteAt(w, ptr(unsafe.Pointer(&bad)), 2, 0), content())
	say("fault-pwrite-nwritten", fdPwriteAt(w, ptr(unsafe.Pointer(&good)), 1, 0, past), content())
	// 2^29 + 1 iovecs, which are 8 bytes of them modulo 2^32.
	var n uint32
	say("fault-write-wrap", fdWriteAt(w, ptr(unsafe.Pointer(&good)), 1<<29+1, ptr(unsafe.Pointer(&n))), content())
	say("fault-stdout-nwritten", fdWriteAt(1, ptr(unsafe.Pointer(&good)), 1, past))
	say("fault-badfd", fdWriteAt(99, ptr(unsafe.Pointer(&good)), 1, past))
	// A descriptor not open and an answer past memory: EBADF, as Linux
	// checks the descriptor first.
	say("fault-filestat-badfd", fdFilestatGet(99, past))
	say("fault-filestat", fdFilestatGet(3, past))

	r, _ := open(3, "inside.txt", 0, rightFdRead|rightFdSeek|1<<5, 0)
	buf := []byte("----")
	iovs := [4]uint32{ptr(unsafe.Pointer(&buf[0])), 2, size - 1, 10}
	at := func() uint64 {
		var pos uint64
		fdTell(r, ptr(unsafe.Pointer(&pos)))
		return pos
	}
	say("fault-read-nread", fdReadAt(r, ptr(unsafe.Pointer(&iovs)), 1, past), string(buf), at())
	say("fault-read-iovec", fdReadAt(r, ptr(unsafe.Pointer(&iovs)), 2, ptr(unsafe.Pointer(&n))), string(buf), at())
	say("fault-pread-nread", fdPreadAt(r, ptr(unsafe.Pointer(&iovs)), 1, 0, past), string(buf))
	say("fault-seek", fdSeekAt(r, 3, 0, past), at())

	name := []byte("made.txt")
	say("fault-open-creat", pathOpenAt(3, 0, ptr(unsafe.Pointer(&name[0])), uint32(len(name)), oflagCreat,
		rightFdRead|rightFdWrite, 0, 0, past))
	in := []byte("inside.txt")
	say("fault-open-trunc", pathOpenAt(3, 0, ptr(unsafe.Pointer(&in[0])), uint32(len(in)), oflagTrunc,
		rightFdRead|rightFdWrite, 0, 0, past))

	link := []byte("lsub")
	say("fault-readlink", pathReadlink(3, ptr(unsafe.Pointer(&link[0])), 4, ptr(unsafe.Pointer(&buf[0])), 4, past), string(buf))
	d, _ := open(3, ".", oflagDirectory, rightFdRead|1<<14, 0)
	list := make([]byte, 64)
	say("fault-readdir", fdReaddir(d, ptr(unsafe.Pointer(&list[0])), 64, 0, past), list[0])

	// The first answer in memory, the second past it: the first is left
	// as it was.
	count := uint32(77)
	say("fault-args-sizes", argsSizesGet(ptr(unsafe.Pointer(&count)), past), count)
	say("fault-environ-sizes", environSizesGet(ptr(unsafe.Pointer(&count)), past), count)
}

//go:wasmimport wasi_snapshot_preview1 args_sizes_get
func argsSizesGet(argc, argvLen uint32) uint32

//go:wasmimport wasi_snapshot_preview1 environ_sizes_get
func environSizesGet(environc, environLen uint32) uint32
