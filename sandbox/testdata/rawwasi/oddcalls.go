package main

import (
	"strconv"
	"unsafe"
)

// oddCalls makes the calls whose answers wazero's gave otherwise than
// Linux, and prints the errno of each (see TestOddCallsAnswerAsLinux):
// fd_seek of /work's inside.txt with whence 3 and 4 (which are not
// WASI's; the host's lseek(2) takes them as SEEK_DATA and SEEK_HOLE) and
// the offset after each, fd_allocate of an empty range, fd_advise of a
// length past int64's, and
// fd_fdstat_set_flags with NONBLOCK on a file and on a directory, and
// fd_filestat_set_times and path_filestat_set_times of inside.txt with
// fstflags bits WASI does not define (16, 32768), and path_filestat_get,
// path_filestat_set_times and path_link of inside.txt with lookupflags
// bits WASI does not define (2, 2^31).
func oddCalls() {
	f, _ := open(3, "inside.txt", 0, rightFdRead|rightFdWrite|rightFdSeek|1<<5|1<<3|1<<8|1<<23, 0)
	var pos uint64
	fdSeek(f, 2, 0, unsafe.Pointer(&pos))
	for _, whence := range []uint32{3, 4} {
		e := fdSeek(f, 0, whence, unsafe.Pointer(&pos))
		fdSeek(f, 0, 1, unsafe.Pointer(&pos))
		say("odd-seek-whence-"+string(rune('0'+whence)), e, pos)
	}
	say("odd-allocate-empty", fdAllocate(f, 0, 0))
	say("odd-advise-negative", fdAdvise(f, 0, 1<<63, 0))
	say("odd-nonblock-file", fdFdstatSetFlags(f, 1<<2))
	d, _ := open(3, "sub", oflagDirectory, rightFdRead|1<<3, 0)
	say("odd-nonblock-dir", fdFdstatSetFlags(d, 1<<2))
	p, n := ptr("inside.txt")
	for _, flag := range []uint32{1 << 4, 1 << 15} {
		say("odd-settimes-flag-"+strconv.Itoa(int(flag)), fdFilestatSetTimes(f, 1, 2, 1|flag))
		say("odd-pathsettimes-flag-"+strconv.Itoa(int(flag)), pathFilestatSetTimes(3, 0, p, n, 1, 2, 1|flag))
	}
	var st [64]byte
	q, m := ptr("linked")
	for _, flag := range []uint32{1 << 1, 1 << 31} {
		say("odd-lookup-stat-"+strconv.Itoa(int(flag)), pathFilestatGet(3, 1|flag, p, n, uint32(uintptr(unsafe.Pointer(&st[0])))))
		say("odd-lookup-settimes-"+strconv.Itoa(int(flag)), pathFilestatSetTimes(3, 1|flag, p, n, 1, 2, 1))
		say("odd-lookup-link-"+strconv.Itoa(int(flag)), pathLink(3, 1|flag, p, n, 3, q, m))
	}
}
