package main

import (
	"unsafe"
)

// bigIO makes one call of OP (write, pwrite: to stderr, whose bytes the
// test throws away, or to big in /work; read, pread: from big in /work,
// which the test made sparse and larger than what is asked) with N
// iovecs of 1 MiB each, all the same buffer, and prints its errno, the
// count it was told and whether its iovecs are as it made them.
func bigIO(op, n string, toFile bool) {
	var count int
	for _, c := range n {
		count = 10*count + int(c-'0')
	}
	buf := make([]byte, 1<<20)
	iovs := make([]uint32, 2*count)
	for i := range count {
		iovs[2*i], iovs[2*i+1] = uint32(uintptr(unsafe.Pointer(&buf[0]))), uint32(len(buf))
	}
	fd := int32(2)
	if op == "read" || op == "pread" || toFile {
		var e uint32
		if fd, e = open(3, "big", 0, rightFdRead|rightFdWrite|rightFdSeek, 0); e != 0 {
			say("bigio", "open", e)
			return
		}
	}
	var got uint32
	var e uint32
	switch op {
	case "write":
		e = fdWrite(fd, unsafe.Pointer(&iovs[0]), uint32(count), unsafe.Pointer(&got))
	case "pwrite":
		e = fdPwrite(fd, unsafe.Pointer(&iovs[0]), uint32(count), 0, unsafe.Pointer(&got))
	case "read":
		e = fdRead(fd, unsafe.Pointer(&iovs[0]), uint32(count), unsafe.Pointer(&got))
	case "pread":
		e = fdPread(fd, unsafe.Pointer(&iovs[0]), uint32(count), 0, unsafe.Pointer(&got))
	}
	kept := true // the iovecs are as the guest left them
	for i := range count {
		kept = kept && iovs[2*i+1] == uint32(len(buf))
	}
	say("bigio-"+op, e, got, kept)
}
