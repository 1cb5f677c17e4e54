package main

import (
	"unsafe"
)

// full makes /work's big and asks of it what the host's filesystem
// refuses with an errno wazero's set has no name for, printing the errno
// of each (see TestHostErrnosReachTheGuest): a pwrite and a size past the
// largest file (EFBIG), up to N writes of 1 MiB until the disk, a small
// one, is full (ENOSPC), and opens until the call's budget of open files
// is spent (EMFILE).
func full(writes int) {
	const rights = rightFdRead | rightFdWrite | rightFdSeek | 1<<22
	fd, e := open(3, "big", oflagCreat, rights, 0)
	say("full-open", e)
	say("full-pwrite-past-largest", pwrite(fd, 1<<62))
	say("full-setsize-past-largest", fdFilestatSetSize(fd, 1<<62))
	buf := make([]byte, 1<<20)
	iov := [2]uint32{uint32(uintptr(unsafe.Pointer(&buf[0]))), uint32(len(buf))}
	for range writes {
		var n uint32
		if e = fdWrite(fd, unsafe.Pointer(&iov), 1, unsafe.Pointer(&n)); e != 0 {
			break
		}
	}
	say("full-write", e)
	for range 1000 {
		if _, e = open(3, "big", 0, rightFdRead, 0); e != 0 {
			break
		}
	}
	say("full-files", e)
}
