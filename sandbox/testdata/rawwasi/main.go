// Command rawwasi calls WASI preview 1's functions with the arguments a
// hostile module passes them: descriptors past any open, negative offsets,
// pointers past the end of memory, renumberings onto stdio and preopens,
// rights narrowed and asked back. It expects /work (fd 3, read-write,
// holding inside.txt and sub/) and /ro (fd 4, read-only, holding
// ro.txt), and prints one line per attempt: its name, the errnos
// it got, and what else it learned.
//
// Its other arguments each make one call with a huge count or buffer, in
// memory grown for it past the Go runtime's, having written a line to
// stderr, and print its errno:
//
//	poll N        poll_oneoff of N subscriptions to read stdin, whose
//	              events overwrite them (prints the number of events too)
//	pollclocks N  the same with N clocks of no time
//	wait N        poll_oneoff of N clocks of 200 ms each
//	writev FILE N fd_write of N iovecs of one byte, all the same, to FILE
//	              in /work (prints the number of bytes written too); with
//	              FILE "-", N empty iovecs to stdout
//	random N      random_get of N bytes
//	pollover N D  poll_oneoff of N subscriptions, every third a clock, with
//	              the events D bytes past them (prints the number of
//	              events and of those not as expected too)
//
// With the arguments bigio OP N [file] it makes one fd_write, fd_pwrite
// (to stderr, or with file to /work's big), fd_read or fd_pread (from
// /work's big) of N iovecs of 1 MiB, all one buffer, and prints its errno
// and the count it was told (see bigIO).
//
// With the arguments exit CODE it calls proc_exit with CODE, a decimal
// uint32.
//
// With the argument nofollowtimes it sets times without following
// symlinks (see noFollowTimes).
//
// With the argument abstime it polls clocks of absolute times (see
// absTime).
//
// With the argument clocks it reads every clock (see clocks).
//
// With the argument oddcalls it makes calls of flags and ranges that
// wazero's answered otherwise than Linux (see oddCalls).
//
// With the argument dirmove it renames directories it holds descriptors
// of and uses them (see dirMove).
//
// With the arguments full N it asks of /work what its filesystem refuses
// with EFBIG, ENOSPC and EMFILE, and prints the errno of each (see full).
//
// With the arguments stdiomove NAME it makes one of the renumberings of
// stdio of stdioMoves, in a call of its own, and prints what it got.
//
// With the argument linkmove it renames the symlinks and the directory
// holding one that the test planted in /work (see
// TestGuestMovesNoLinkOutOfItsWorkspace), to other directories and
// within their own, and prints the errno of each rename.
//
// With the argument dirflags it opens /work's sub, inside.txt and new
// (which is not there) with the flags whose answer open(2) decides by
// what is there, a directory or not, and prints the errno of each.
//
// With the argument xdev it renames /work's inside.txt to moved in the
// mount at fd 4, and prints the errno.
//
// With the argument dots it calls each path function with paths whose
// "." and ".." follow a file, nothing, or end the path, under /work
// (holding inside.txt, sub/, the empty dir empty/ and lsub, a symlink to
// sub), and prints the
// errno of each (see TestDotsOfAPathAnswerAsLinux); then path_readlink of
// lsub into buffers of 1, 2, 3 and 64 bytes (TestReadlinkFillsASmallBuffer).
//
// With the argument readdir it lists /work (holding only f00 to f29) with
// fd_readdir from cookies at, past and before what a descriptor has
// listed so far, and prints the errno of each, the bytes it used, and
// whether it listed the entries from the cookie on (see
// TestReaddirCookieAnswersAsLinux); then fd_seek of the directory to 0
// from its start and from where it is.
//
// With the arguments removed NAME it opens the directory NAME, removes
// it and then uses its descriptor (see removed).
//
// With the argument faults it calls the functions that act and then
// answer with the answer's pointer, or an iovec, past the end of memory,
// and prints what each did (see faults, TestFaultingCallDoesNothing).
//
// With the arguments pathcall OP PATH [TO] it makes one call on PATH
// under /work (OP: stat, lstat, stattop (the path and its answer in the
// last bytes of memory), renametop (its TO there), open, opendir, opennofollow, create,
// readlink, mkdir, rmdir, unlink, rename to TO, link to TO, symlink TO
// with PATH as its text, writedir, resizedir, lsettimes) and prints its
// errno and what it found (see pathCall, TestLinkDotsAnswerAsLinux).
//
// With the argument rdtrunc it opens with O_TRUNC and the rights of a file
// only read: /work's lower.txt, which it has not written, and made.txt,
// which it writes first; it prints the errno of the open, the size read
// after it, the errno of that read and of a write to it.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 path_open
func pathOpenAt(fd int32, dirflags uint32, path uint32, pathLen uint32, oflags uint32,
	base, inheriting uint64, fdflags uint32, opened uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_open
func pathOpen(fd int32, dirflags uint32, path unsafe.Pointer, pathLen uint32, oflags uint32,
	base, inheriting uint64, fdflags uint32, opened unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_read
func fdReadAt(fd int32, iovs, n, nread uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_write
func fdWriteAt(fd int32, iovs, n, nwritten uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_pread
func fdPreadAt(fd int32, iovs, n uint32, off uint64, nread uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_pwrite
func fdPwriteAt(fd int32, iovs, n uint32, off uint64, nwritten uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_seek
func fdSeekAt(fd int32, off int64, whence uint32, to uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_read
func fdRead(fd int32, iovs unsafe.Pointer, n uint32, nread unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_write
func fdWrite(fd int32, iovs unsafe.Pointer, n uint32, nwritten unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_pread
func fdPread(fd int32, iovs unsafe.Pointer, n uint32, off uint64, nread unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_pwrite
func fdPwrite(fd int32, iovs unsafe.Pointer, n uint32, off uint64, nwritten unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_seek
func fdSeek(fd int32, off int64, whence uint32, to unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_filestat_set_size
func fdFilestatSetSize(fd int32, size uint64) uint32

//go:wasmimport wasi_snapshot_preview1 fd_allocate
func fdAllocate(fd int32, off, n uint64) uint32

//go:wasmimport wasi_snapshot_preview1 fd_close
func fdClose(fd int32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_renumber
func fdRenumber(fd, to int32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_get
func fdFdstatGet(fd int32, stat unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_get
func fdFdstatGetAt(fd int32, at uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_set_rights
func fdFdstatSetRights(fd int32, base, inheriting uint64) uint32

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_set_flags
func fdFdstatSetFlags(fd int32, flags uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_prestat_get
func fdPrestatGet(fd int32, at unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_prestat_dir_name
func fdPrestatDirName(fd int32, at unsafe.Pointer, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_prestat_dir_name
func fdPrestatDirNameAt(fd int32, at, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 random_get
func randomGet(at, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 poll_oneoff
func pollOneoff(in, out uint32, n uint32, nevents uint32) uint32

const (
	rightFdRead         = 1 << 1
	rightFdSeek         = 1 << 2
	rightFdWrite        = 1 << 6
	rightPathCreateFile = 1 << 10
	rightPathOpen       = 1 << 13

	oflagCreat     = 1 << 0
	oflagDirectory = 1 << 1
	oflagTrunc     = 1 << 3
	fdflagAppend   = 1 << 0
)

var out strings.Builder

func say(name string, args ...any) {
	out.WriteString(name)
	for _, a := range args {
		fmt.Fprintf(&out, " %v", a)
	}
	out.WriteString("\n")
}

func open(dir int32, name string, oflags uint32, rights uint64, fdflags uint32) (int32, uint32) {
	b := []byte(name)
	fd := int32(-1)
	errno := pathOpen(dir, 0, unsafe.Pointer(&b[0]), uint32(len(b)), oflags, rights, rights, fdflags, unsafe.Pointer(&fd))
	return fd, errno
}

func write(fd int32, s string) uint32 {
	b := []byte(s)
	iov := [2]uint32{uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))}
	var n uint32
	return fdWrite(fd, unsafe.Pointer(&iov), 1, unsafe.Pointer(&n))
}

func read(fd int32) (string, uint32) {
	b := make([]byte, 64)
	iov := [2]uint32{uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))}
	var n uint32
	errno := fdRead(fd, unsafe.Pointer(&iov), 1, unsafe.Pointer(&n))
	return string(b[:n]), errno
}

func pread(fd int32, off uint64) uint32 {
	b := make([]byte, 8)
	iov := [2]uint32{uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))}
	var n uint32
	return fdPread(fd, unsafe.Pointer(&iov), 1, off, unsafe.Pointer(&n))
}

func pwrite(fd int32, off uint64) uint32 {
	b := []byte("x")
	iov := [2]uint32{uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))}
	var n uint32
	return fdPwrite(fd, unsafe.Pointer(&iov), 1, off, unsafe.Pointer(&n))
}

type fdstat struct {
	filetype         uint8
	flags            uint16
	base, inheriting uint64
}

func stat(fd int32) (fdstat, uint32) {
	var st fdstat
	errno := fdFdstatGet(fd, unsafe.Pointer(&st))
	return st, errno
}

func prestat(fd int32) uint32 {
	var b [8]byte
	return fdPrestatGet(fd, unsafe.Pointer(&b[0]))
}

func main() {
	defer func() {
		os.Stdout.WriteString(out.String())
	}()
	size := uint32(wasmMemorySize()) * 65536 // linear memory's, in bytes
	if len(os.Args) > 2 && (os.Args[1] == "poll" || os.Args[1] == "pollclocks" || os.Args[1] == "wait") {
		// The subscriptions are in memory grown for them past the Go
		// runtime's, zero but for their type: filling them costs the
		// guest next to nothing.
		var n int
		fmt.Sscan(os.Args[2], &n)
		old := growMemory(int32((48*n + 65535) / 65536))
		if old < 0 {
			say("poll", "no memory for the subscriptions")
			return
		}
		at := uint32(old) * 65536
		for i := range n * b2i(os.Args[1] == "poll") {
			*(*byte)(unsafe.Pointer(uintptr(at) + uintptr(48*i+8))) = 1 // fd_read of stdin
		}
		for i := range n * b2i(os.Args[1] == "wait") {
			*(*uint64)(unsafe.Pointer(uintptr(at) + uintptr(48*i+24))) = 200_000_000
		}
		var nev uint32
		os.Stderr.WriteString("polling\n")
		say("poll", pollOneoff(at, at, uint32(n), uint32(uintptr(unsafe.Pointer(&nev)))), nev)
		return
	}

	if len(os.Args) > 3 && os.Args[1] == "pollover" {
		// N subscriptions to read stdin, the i-th with userdata i+1, every
		// third a clock beside them (which gets no event), and the events
		// D bytes past them, over them.
		var n, d int
		fmt.Sscan(os.Args[2], &n)
		fmt.Sscan(os.Args[3], &d)
		old := growMemory(int32((48*n + d + 32*n + 65535) / 65536))
		if old < 0 {
			say("pollover", "no memory for the subscriptions")
			return
		}
		at := uintptr(old) * 65536
		for i := range n {
			s := unsafe.Slice((*byte)(unsafe.Pointer(at+uintptr(48*i))), 48)
			binary.LittleEndian.PutUint64(s, uint64(i+1))
			if i%3 == 2 {
				s[8] = 0
				binary.LittleEndian.PutUint64(s[24:], 1)
			} else {
				s[8] = 1
			}
		}
		var nev uint32
		os.Stderr.WriteString("polling\n")
		e := pollOneoff(uint32(at), uint32(at)+uint32(d), uint32(n), uint32(uintptr(unsafe.Pointer(&nev))))
		bad, want := 0, uint64(1)
		for c := range nev {
			ev := unsafe.Slice((*byte)(unsafe.Pointer(at+uintptr(d)+uintptr(32*c))), 32)
			if want%3 == 0 {
				want++
			}
			if binary.LittleEndian.Uint64(ev) != want || ev[10] != 1 || binary.LittleEndian.Uint16(ev[8:]) != 0 {
				bad++
			}
			want++
		}
		say("pollover", e, nev, bad)
		return
	}

	if len(os.Args) > 3 && os.Args[1] == "writev" {
		// N iovecs, all of one byte, the same, in memory grown for
		// them past the Go runtime's.
		var n int
		fmt.Sscan(os.Args[3], &n)
		old := growMemory(int32((8*n + 65535) / 65536))
		if old < 0 {
			say("writev", "no memory for the iovecs")
			return
		}
		at := uint32(old) * 65536
		for i := range n * b2i(os.Args[2] != "-") {
			*(*uint32)(unsafe.Pointer(uintptr(at) + uintptr(8*i+4))) = 1 // the byte at 0
		}
		fd, e := int32(1), uint32(0)
		if os.Args[2] != "-" {
			fd, e = open(3, os.Args[2], oflagCreat, rightFdRead|rightFdWrite, 0)
		}
		if e != 0 {
			say("writev", "open", e)
			return
		}
		var nw uint32
		os.Stderr.WriteString("writing\n")
		say("writev", fdWrite(fd, unsafe.Pointer(uintptr(at)), uint32(n), unsafe.Pointer(&nw)), nw)
		return
	}

	if len(os.Args) > 2 && os.Args[1] == "exit" {
		exitWith(os.Args[2])
	}

	if len(os.Args) > 1 && os.Args[1] == "nofollowtimes" {
		noFollowTimes()
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "clocks" {
		clocks()
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "abstime" {
		absTime()
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "oddcalls" {
		oddCalls()
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "dirmove" {
		dirMove()
		return
	}

	if len(os.Args) > 2 && os.Args[1] == "full" {
		var n int
		fmt.Sscan(os.Args[2], &n)
		full(n)
		return
	}

	if len(os.Args) > 3 && os.Args[1] == "bigio" {
		bigIO(os.Args[2], os.Args[3], len(os.Args) > 4)
		return
	}

	if len(os.Args) > 2 && os.Args[1] == "random" {
		var n int
		fmt.Sscan(os.Args[2], &n)
		old := growMemory(int32((n + 65535) / 65536))
		if old < 0 {
			say("random", "no memory")
			return
		}
		os.Stderr.WriteString("random\n")
		say("random", randomGet(uint32(old)*65536, uint32(n)))
		return
	}

	if len(os.Args) > 2 && os.Args[1] == "stdiomove" {
		stdioMove(os.Args[2])
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "linkmove" {
		for _, mv := range [][2]string{
			{"to-deep/", "moved"}, {"sub/up", "up"}, {"sub/up", "sub/up2"}, {"sub/deep", "deep"},
			{"sub/deep", "sub/deep2"}, {"sub/../sub/up2", "up3"}, {"sub/plain", "plain"},
		} {
			from, to := []byte(mv[0]), []byte(mv[1])
			say("linkmove-"+mv[0]+"-"+mv[1], pathRename(3, uint32(uintptr(unsafe.Pointer(&from[0]))), uint32(len(from)),
				3, uint32(uintptr(unsafe.Pointer(&to[0]))), uint32(len(to))))
		}
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "dirflags" {
		const oflagExcl = 1 << 2
		for _, o := range []struct {
			name, path string
			oflags     uint32
			rights     uint64
			fdflags    uint32
		}{
			{"append", "sub", 0, rightFdRead, fdflagAppend},
			{"creat-excl", "sub", oflagCreat | oflagExcl, rightFdRead, 0},
			{"creat", "sub", oflagCreat, rightFdRead, 0},
			{"trunc", "sub", oflagTrunc, rightFdRead, 0},
			{"trunc-directory", "sub", oflagTrunc | oflagDirectory, rightFdRead, 0},
			{"creat-slash-new", "new/", oflagCreat, rightFdRead | rightFdWrite, 0},
			{"creat-slash-file", "inside.txt/", oflagCreat, rightFdRead | rightFdWrite, 0},
			{"creat-slash-dir", "sub/", oflagCreat, rightFdRead | rightFdWrite, 0},
			{"creat-excl-file", "inside.txt", oflagCreat | oflagExcl, rightFdRead | rightFdWrite, 0},
		} {
			fd, e := open(3, o.path, o.oflags, o.rights, o.fdflags)
			if e == 0 {
				fdClose(fd)
			}
			say("dirflags-"+o.name, e)
		}
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "xdev" {
		// inside.txt of /work renamed to moved in the other mount, fd 4.
		from, to := []byte("inside.txt"), []byte("moved")
		say("xdev", pathRename(3, uint32(uintptr(unsafe.Pointer(&from[0]))), uint32(len(from)),
			4, uint32(uintptr(unsafe.Pointer(&to[0]))), uint32(len(to))))
		return
	}

	if len(os.Args) > 3 && os.Args[1] == "pathcall" {
		to := ""
		if len(os.Args) > 4 {
			to = os.Args[4]
		}
		pathCall(os.Args[2], os.Args[3], to)
		return
	}

	if len(os.Args) > 2 && os.Args[1] == "removed" {
		removed(os.Args[2])
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "faults" {
		faults()
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "dots" {
		dots()
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "stdioseek" {
		// Seeking, telling and reading or writing at an offset on stdin,
		// stdout and stderr, none of which is a file.
		for fd := int32(0); fd < 3; fd++ {
			var pos uint64
			say(fmt.Sprintf("stdioseek-%d", fd),
				fdSeek(fd, 0, 0, unsafe.Pointer(&pos)),
				fdSeek(fd, 0, 1, unsafe.Pointer(&pos)),
				fdSeek(fd, 1, 2, unsafe.Pointer(&pos)),
				fdTell(fd, uint32(uintptr(unsafe.Pointer(&pos)))))
		}
		say("stdioseek-pread", pread(0, 0))
		say("stdioseek-pwrite", pwrite(1, 0), pwrite(2, 0))
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "readdir" {
		listCookies()
		return
	}

	if len(os.Args) > 1 && os.Args[1] == "rdtrunc" {
		m, _ := open(3, "made.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
		write(m, "made content")
		fdClose(m)
		for _, name := range []string{"lower.txt", "made.txt"} {
			fd, e := open(3, name, oflagTrunc, rightFdRead, 0)
			s, e2 := read(fd)
			say("rdtrunc-"+name, e, len(s), e2, write(fd, "x"))
		}
		return
	}

	// Offsets past 2^63 are negative to the host.
	f, e := open(3, "inside.txt", 0, rightFdRead|1<<2, 0)
	say("open-inside", e)
	say("pread-negative", pread(f, 1<<63))
	var pos uint64
	say("seek-negative", fdSeek(f, -1, 0, unsafe.Pointer(&pos)))
	w, e := open(3, "made.txt", oflagCreat, rightFdRead|rightFdWrite|1<<2|1<<22|1<<8, 0)
	say("open-made", e)
	say("pwrite-negative", pwrite(w, 1<<63))
	say("pwrite-max", pwrite(w, 1<<63-1))
	say("setsize-negative", fdFilestatSetSize(w, 1<<63))
	say("allocate-overflow", fdAllocate(w, 1<<63-1, 10))
	a, e := open(3, "append.txt", oflagCreat, rightFdRead|rightFdWrite|1<<2, fdflagAppend)
	say("open-append", e)
	say("pwrite-negative-append", pwrite(a, 1<<63))

	// Descriptors no file is at.
	for _, fd := range []int32{-1, -2, 1 << 30, 0x7fffffff} {
		st, e := stat(fd)
		say(fmt.Sprintf("fdstat-%d", fd), e, st.base)
		say(fmt.Sprintf("setrights-%d", fd), fdFdstatSetRights(fd, 0, 0))
		say(fmt.Sprintf("renumber-from-%d", fd), fdRenumber(fd, f))
		say(fmt.Sprintf("renumber-to-%d", fd), fdRenumber(f, fd))
		say(fmt.Sprintf("close-%d", fd), fdClose(fd))
		say(fmt.Sprintf("prestat-%d", fd), prestat(fd))
		say(fmt.Sprintf("read-%d", fd), pread(fd, 0))
	}
	// Pointers past the end of memory.
	say("fdstat-past-end", fdFdstatGetAt(3, size-8))
	say("fdstat-wrap", fdFdstatGetAt(3, 0xfffffff8))
	say("prestat-name-past-end", fdPrestatDirNameAt(3, size-1, 5))
	say("prestat-name-wrap", fdPrestatDirNameAt(3, 0xffffffff, 0xffffffff))
	{
		b := []byte("inside.txt")
		p, n := uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))
		var fd int32
		at := uint32(uintptr(unsafe.Pointer(&fd)))
		say("open-result-past-end", pathOpenAt(3, 0, p, n, 0, rightFdRead, rightFdRead, 0, size-2))
		say("open-path-past-end", pathOpenAt(3, 0, size-2, 10, 0, 0, 0, 0, at))
		say("open-path-wrap", pathOpenAt(3, 0, 0xfffffff0, 0x20, 0, 0, 0, 0, at))
	}

	// Out of the mounts, and changes to the read-only one.
	for _, p := range []string{"../outside.txt", "/etc/passwd", "sub/../../outside.txt", "."} {
		_, e := open(3, p, 0, rightFdRead, 0)
		say("open-"+p, e)
	}
	// The read-only preopen reports no right to change anything, the
	// read-write one every right.
	const changing = rightFdWrite | 1<<8 | 1<<9 | rightPathCreateFile | 1<<16 | 1<<17 | 1<<19 |
		1<<20 | 1<<22 | 1<<23 | 1<<25 | 1<<26
	rost4, e := stat(4)
	say("ro-preopen-rights", e, rost4.base&changing, rost4.inheriting&changing, rost4.base&rightPathOpen != 0,
		fdFdstatSetRights(4, rost4.base|rightPathCreateFile, rost4.inheriting))
	// A directory it opens passes on no right to change either, and what
	// is made in it its mount refuses.
	rosub, e := open(4, "rosub", oflagDirectory, rightFdRead|rightPathOpen|rightPathCreateFile, 0)
	rosubst, se := stat(rosub)
	_, ce := open(rosub, "new.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
	say("ro-subdir-rights", e, se, rosubst.base&changing, rosubst.inheriting&changing, rosubst.base&rightPathOpen != 0, ce)
	rwst3, e := stat(3)
	say("rw-preopen-rights", e, rwst3.base&changing == changing&^(rightFdWrite|1<<8|1<<22), rwst3.inheriting&changing == changing)
	_, e = open(4, "ro.txt", 0, 0, fdflagAppend)
	say("ro-append", e)
	_, e = open(4, "ro.txt", oflagTrunc, rightFdRead, 0)
	say("ro-trunc", e)
	_, e = open(4, "new.txt", oflagCreat, 0, 0)
	say("ro-create", e)
	ro, e := open(4, "ro.txt", 0, rightFdRead, 0)
	rost, _ := stat(ro)
	say("ro-write", e, fdFdstatSetFlags(ro, fdflagAppend), write(ro, "x"),
		fdFdstatSetRights(ro, rost.base|rightFdWrite, rost.inheriting))
	say("ro-renumber-rw-onto", fdRenumber(w, ro), write(ro, "x"), fdRenumber(ro, w))
	_, e = open(3, ".cairn-apply-0011", oflagCreat, rightFdWrite, 0)
	say("apply-temp", e)

	// Stdio and preopens as renumbering sees them.
	say("prestat-stdio", prestat(1), prestat(0))
	say("renumber-stdio-self", fdRenumber(1, 1))
	say("renumber-preopen-self", fdRenumber(3, 3))
	say("renumber-preopen-onto-file", fdRenumber(3, f))

	// A read-only file renumbered onto a writable one does not write.
	r1, _ := open(3, "inside.txt", 0, rightFdRead, 0)
	w1, _ := open(3, "w1.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
	say("renumber-ro-onto-rw", fdRenumber(r1, w1), write(w1, "x"), write(r1, "x"))
	// A writable one renumbered onto a narrowed one writes.
	w2, _ := open(3, "w2.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
	r2, _ := open(3, "inside.txt", 0, rightFdRead, 0)
	st, _ := stat(w2)
	say("narrow-then-renumber", fdFdstatSetRights(w2, st.base&^rightFdWrite, 0), write(w2, "x"),
		fdRenumber(w2, r2), write(r2, "x"), fdFdstatSetRights(r2, st.base, 0))

	// A read-only file renumbered onto stdin: stdin reads it, and does not
	// write it.
	r3, _ := open(3, "inside.txt", 0, rightFdRead, 0)
	e = fdRenumber(r3, 0)
	s, e2 := read(0)
	say("renumber-onto-stdin", e, s, e2, write(0, "x"), prestat(0))

	// A file renumbered onto the read-only preopen: the preopen is gone,
	// and the file there is not one.
	r4, _ := open(3, "inside.txt", 0, rightFdRead, 0)
	e = fdRenumber(r4, 4)
	_, e2 = open(4, "ro.txt", 0, rightFdRead, 0)
	say("renumber-onto-ro-preopen", e, prestat(4), e2, write(4, "x"))
	fdClose(4)

	// A directory narrowed, renumbered, and opened through: it creates no
	// file, and what it opens is not written.
	ex, _ := open(3, "sub/existing.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
	write(ex, "existing")
	fdClose(ex)
	d, e := open(3, "sub", oflagDirectory, ^uint64(0)&^rightFdWrite, 0)
	dst, _ := stat(d)
	e2 = fdFdstatSetRights(d, dst.base&^rightPathCreateFile, dst.inheriting&^rightFdWrite)
	x, _ := open(3, "inside.txt", 0, rightFdRead, 0)
	e3 := fdRenumber(d, x)
	_, e4 := open(x, "new.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
	g, e5 := open(x, "existing.txt", 0, rightFdRead|rightFdWrite, 0)
	say("narrowed-dir-renumbered", e, e2, e3, e4, e5, write(g, "x"))
	_, e5 = open(x, "../inside.txt", 0, rightFdRead, 0)
	say("narrowed-dir-dotdot", e5)

	// Rights a descriptor lacks: a read-only file is not grown, cut or
	// allocated, a narrowed one not sought, a directory not allocated,
	// and a preopen narrowed to no PATH_OPEN opens nothing.
	r5, _ := open(3, "inside.txt", 0, rightFdRead|rightFdSeek, 0)
	r5st, _ := stat(r5)
	say("read-only-rights", fdFilestatSetSize(r5, 0), fdAllocate(r5, 0, 1),
		fdFdstatSetRights(r5, r5st.base&^rightFdSeek, 0), fdSeek(r5, 1, 0, unsafe.Pointer(&pos)))
	say("allocate-dir", fdAllocate(3, 0, 1))
	{
		var b [8]byte
		say("prestat-name-short", fdPrestatDirName(3, unsafe.Pointer(&b[0]), 0))
	}
	p3, _ := stat(3)
	e = fdFdstatSetRights(3, p3.base&^rightPathOpen, p3.inheriting)
	_, e2 = open(3, "inside.txt", 0, rightFdRead, 0)
	say("preopen-narrowed", e, e2, fdRenumber(3, x))

	// Closing a preopen: nothing opens through it, and the next file
	// takes its number and is no preopen.
	e = fdClose(3)
	_, e2 = open(3, "inside.txt", 0, rightFdRead, 0)
	n, e3 := open(x, "existing.txt", 0, rightFdRead, 0)
	nst, _ := stat(n)
	say("close-preopen", e, prestat(3), e2, e3, n, prestat(n), nst.base&rightFdWrite != 0)

	// poll_oneoff with events over its subscriptions and past memory.
	buf := make([]byte, 48*3+32*3)
	at := uint32(uintptr(unsafe.Pointer(&buf[0])))
	for i, fd := range []uint32{1, 2, 77} {
		b := buf[48*i:]
		binary.LittleEndian.PutUint64(b, uint64(i+1))
		b[8] = 2
		binary.LittleEndian.PutUint32(b[16:], fd)
	}
	var nev uint32
	nevAt := uint32(uintptr(unsafe.Pointer(&nev)))
	e = pollOneoff(at, at, 3, nevAt)
	line := fmt.Sprint(e, nev)
	for i := range min(nev, 3) {
		ev := buf[32*i:]
		line += fmt.Sprintf(" %d:%d:%d", binary.LittleEndian.Uint64(ev), ev[10], binary.LittleEndian.Uint16(ev[8:]))
	}
	say("poll-overlap", line)
	say("poll-events-past-end", pollOneoff(at, size-40, 3, nevAt))
	say("poll-nevents-past-end", pollOneoff(at, at+200, 1, size-2))
	say("poll-in-past-end", pollOneoff(size-48, at, 2, nevAt))
	say("poll-wrap", pollOneoff(0xffffffd0, at, 1, nevAt))
	say("poll-huge", pollOneoff(at, at, 0x05555555, nevAt))

	// Last, as stderr is gone from 2 after it: stderr moved onto a file
	// opened to read, which it closes. The file's number writes to
	// stderr; 2 is closed: fd_fdstat_get and poll_oneoff find it so, and
	// nothing moves onto it; closed, the file's number is closed too.
	e = fdRenumber(2, f)
	clear(buf)
	buf[8] = 2
	binary.LittleEndian.PutUint32(buf[16:], 2)
	nev = 0
	e2 = pollOneoff(at, at+48, 1, nevAt)
	pollErrno := binary.LittleEndian.Uint16(buf[48+8:])
	_, e3 = stat(2)
	say("renumber-stdio-onto-file", e, write(f, "moved\n"), e3, fdRenumber(n, 2), e2, nev, pollErrno,
		fdClose(f), fdClose(f), write(f, "x"))
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wasmMemorySize is the size of linear memory in pages (mem_wasm.s).
func wasmMemorySize() int32

// growMemory grows linear memory by pages and returns its size before,
// in pages, or -1 (mem_wasm.s).
func growMemory(pages int32) int32

// dots calls the path functions with paths holding "." and "..", each
// once, and prints the errno of each: "dots-" and its name.
func dots() {
	var st [64]byte
	var buf [64]byte
	var used uint32
	at := func(p string) (uint32, uint32) {
		b := []byte(p)
		return uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))
	}
	for _, c := range []struct {
		name string
		call func() uint32
	}{
		{"mkdir-file-dotdot", func() uint32 { p, n := at("inside.txt/.."); return pathCreateDirectory(3, p, n) }},
		{"mkdir-missing-dot-x", func() uint32 { p, n := at("missing/./x"); return pathCreateDirectory(3, p, n) }},
		{"creat-missing-dot", func() uint32 {
			_, e := open(3, "missing/.", oflagCreat, rightFdRead|rightFdWrite, 0)
			return e
		}},
		{"open-missing-dotdot", func() uint32 {
			fd, e := open(3, "missing/../inside.txt", 0, rightFdRead, 0)
			if e == 0 {
				fdClose(fd)
			}
			return e
		}},
		{"open-sub-dotdot", func() uint32 {
			fd, e := open(3, "sub/../inside.txt", 0, rightFdRead, 0)
			if e == 0 {
				fdClose(fd)
			}
			return e
		}},
		{"stat-file-dot", func() uint32 {
			p, n := at("inside.txt/.")
			return pathFilestatGet(3, 1, p, n, uint32(uintptr(unsafe.Pointer(&st[0]))))
		}},
		{"readlink-sub-dot", func() uint32 {
			p, n := at("sub/.")
			return pathReadlink(3, p, n, uint32(uintptr(unsafe.Pointer(&buf[0]))), 64, uint32(uintptr(unsafe.Pointer(&used))))
		}},
		{"stat-link-dot", func() uint32 {
			p, n := at("lsub/./kept")
			return pathFilestatGet(3, 1, p, n, uint32(uintptr(unsafe.Pointer(&st[0]))))
		}},
		{"stat-link-dotdot", func() uint32 {
			p, n := at("lsub/../inside.txt")
			return pathFilestatGet(3, 1, p, n, uint32(uintptr(unsafe.Pointer(&st[0]))))
		}},
		{"stat-long-dotdot", func() uint32 {
			// 10 MB of "sub/.." pairs, which clean to ".".
			p, n := at(strings.Repeat("sub/../", 1<<20/7*10) + "inside.txt")
			return pathFilestatGet(3, 1, p, n, uint32(uintptr(unsafe.Pointer(&st[0]))))
		}},
		{"stat-4094", func() uint32 {
			p, n := at(strings.Repeat("./", 2042) + "inside.txt")
			return pathFilestatGet(3, 1, p, n, uint32(uintptr(unsafe.Pointer(&st[0]))))
		}},
		{"unlink-file-dotdot", func() uint32 { p, n := at("inside.txt/.."); return pathUnlinkFile(3, p, n) }},
		{"rmdir-empty-dot", func() uint32 { p, n := at("empty/."); return pathRemoveDirectory(3, p, n) }},
		{"rmdir-sub-dotdot", func() uint32 { p, n := at("sub/.."); return pathRemoveDirectory(3, p, n) }},
		{"rename-empty-dot", func() uint32 {
			p, n := at("empty/.")
			q, m := at("moved")
			return pathRename(3, p, n, 3, q, m)
		}},
		{"rename-onto-empty-dotdot", func() uint32 {
			p, n := at("sub")
			q, m := at("empty/..")
			return pathRename(3, p, n, 3, q, m)
		}},
	} {
		say("dots-"+c.name, c.call())
	}
	// path_readlink of lsub ("sub") into buffers of each size: what fits.
	for _, n := range []uint32{1, 2, 3, 64} {
		for i := range buf {
			buf[i] = '-'
		}
		used = 0
		p, m := at("lsub")
		e := pathReadlink(3, p, m, uint32(uintptr(unsafe.Pointer(&buf[0]))), n, uint32(uintptr(unsafe.Pointer(&used))))
		say(fmt.Sprintf("readlink-%d", n), e, used, string(buf[:4]))
	}
}

// readdir is fd_readdir(fd, cookie) into a buffer of n bytes: the names
// of the entries it holds whole, the d_next of each, the bytes it used
// and the errno.
func readdir(fd int32, cookie uint64, n int) (names []string, nexts []uint64, used, errno uint32) {
	b := make([]byte, n)
	errno = fdReaddir(fd, uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(n), cookie, uint32(uintptr(unsafe.Pointer(&used))))
	for p := 0; p+24 <= int(used); {
		l := int(binary.LittleEndian.Uint32(b[p+16:]))
		if p+24+l > int(used) {
			break
		}
		names = append(names, string(b[p+24:p+24+l]))
		nexts = append(nexts, binary.LittleEndian.Uint64(b[p:]))
		p += 24 + l
	}
	return names, nexts, used, errno
}

// listCookies is the readdir mode: each listing from a cookie is told as
// its errno, the bytes it used and whether its names are those of the
// whole listing from the cookie on.
func listCookies() {
	dir := func() int32 {
		fd, _ := open(3, ".", oflagDirectory, 1<<14|rightFdSeek|1<<5, 0)
		return fd
	}
	all, _, _, e := readdir(dir(), 0, 8192)
	say("readdir-all", e, len(all))
	from := func(name string, fd int32, cookie uint64) {
		names, _, used, e := readdir(fd, cookie, 8192)
		want := all[min(int(min(cookie, 1<<20)), len(all)):]
		say(name, e, used, strings.Join(names, ",") == strings.Join(want, ","))
	}
	from("readdir-ahead", dir(), 10)
	from("readdir-ahead-last", dir(), uint64(len(all)-1))
	from("readdir-at-end-fresh", dir(), uint64(len(all)))
	from("readdir-past-end", dir(), uint64(len(all)+5))
	from("readdir-huge", dir(), 1<<63)
	from("readdir-max", dir(), ^uint64(0))
	// A window moved on past cookie 5 by listings of 64 bytes.
	fd := dir()
	for c := uint64(0); c < 20; {
		_, nexts, _, e := readdir(fd, c, 64)
		if e != 0 || len(nexts) == 0 {
			say("readdir-walk", e, c)
			break
		}
		c = nexts[len(nexts)-1]
	}
	from("readdir-behind", fd, 5)
	from("readdir-past-end-then", fd, uint64(len(all)+1))
	from("readdir-rewound", fd, 0)
	// A cookie ahead with a buffer of one dirent's header.
	_, _, used, e := readdir(dir(), 20, 24)
	say("readdir-ahead-small", e, used)
	var pos uint64
	say("readdir-seek", fdSeek(fd, 0, 0, unsafe.Pointer(&pos)), fdSeek(fd, 0, 1, unsafe.Pointer(&pos)))
}
