package main

import (
	"encoding/binary"
	"os"
	"unsafe"
)

// The functions not imported in main.go, each taking a descriptor, called
// with a number the guest moved stdio from.

//go:wasmimport wasi_snapshot_preview1 fd_advise
func fdAdvise(fd int32, off, n uint64, advice uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_datasync
func fdDatasync(fd int32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_sync
func fdSync(fd int32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_tell
func fdTell(fd int32, at uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_filestat_get
func fdFilestatGet(fd int32, at uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_filestat_set_times
func fdFilestatSetTimes(fd int32, atim, mtim uint64, flags uint32) uint32

//go:wasmimport wasi_snapshot_preview1 fd_readdir
func fdReaddir(fd int32, buf, n uint32, cookie uint64, used uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_create_directory
func pathCreateDirectory(fd int32, path, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_filestat_get
func pathFilestatGet(fd int32, flags, path, n, at uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_filestat_set_times
func pathFilestatSetTimes(fd int32, flags, path, n uint32, atim, mtim uint64, fst uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_link
func pathLink(oldFd int32, flags, oldPath, oldN uint32, newFd int32, newPath, newN uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_readlink
func pathReadlink(fd int32, path, n, buf, bufN, used uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_remove_directory
func pathRemoveDirectory(fd int32, path, n uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_rename
func pathRename(fd int32, oldPath, oldN uint32, newFd int32, newPath, newN uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_symlink
func pathSymlink(oldPath, oldN uint32, fd int32, newPath, newN uint32) uint32

//go:wasmimport wasi_snapshot_preview1 path_unlink_file
func pathUnlinkFile(fd int32, path, n uint32) uint32

// hiddenCalls are every function taking a descriptor, called with fd,
// with p the address of a scratch buffer of 256 bytes that names "x" and
// other the number of an open directory.
func hiddenCalls(fd, other int32, p uint32) []uint32 {
	iov := p + 128
	binary.LittleEndian.PutUint32(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(iov))), 8), p)
	binary.LittleEndian.PutUint32(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(iov+4))), 4), 1)
	res := p + 192
	var got []uint32
	for _, e := range []uint32{
		fdRead(fd, unsafe.Pointer(uintptr(iov)), 1, unsafe.Pointer(uintptr(res))),
		fdWrite(fd, unsafe.Pointer(uintptr(iov)), 1, unsafe.Pointer(uintptr(res))),
		fdPread(fd, unsafe.Pointer(uintptr(iov)), 1, 0, unsafe.Pointer(uintptr(res))),
		fdPwrite(fd, unsafe.Pointer(uintptr(iov)), 1, 0, unsafe.Pointer(uintptr(res))),
		fdSeek(fd, 0, 0, unsafe.Pointer(uintptr(res))),
		fdTell(fd, res),
		fdFdstatGetAt(fd, res),
		fdFdstatSetFlags(fd, 0),
		fdFdstatSetRights(fd, 0, 0),
		fdFilestatGet(fd, res),
		fdFilestatSetSize(fd, 0),
		fdFilestatSetTimes(fd, 0, 0, 0),
		fdAdvise(fd, 0, 0, 0),
		fdAllocate(fd, 0, 1),
		fdDatasync(fd),
		fdSync(fd),
		fdReaddir(fd, res, 64, 0, res),
		fdPrestatGet(fd, unsafe.Pointer(uintptr(res))),
		fdPrestatDirNameAt(fd, res, 8),
		pathOpenAt(fd, 0, p, 1, 0, rightFdRead, rightFdRead, 0, res),
		pathCreateDirectory(fd, p, 1),
		pathFilestatGet(fd, 0, p, 1, res),
		pathFilestatSetTimes(fd, 0, p, 1, 0, 0, 0),
		pathLink(fd, 0, p, 1, other, p, 1),
		pathLink(other, 0, p, 1, fd, p, 1),
		pathReadlink(fd, p, 1, res, 8, res+16),
		pathRemoveDirectory(fd, p, 1),
		pathRename(fd, p, 1, other, p, 1),
		pathRename(other, p, 1, fd, p, 1),
		pathSymlink(p, 1, fd, p, 1),
		pathUnlinkFile(fd, p, 1),
		fdRenumber(fd, other),
		fdClose(fd),
	} {
		got = append(got, e)
	}
	return got
}

// distinct is the errnos of es, each once, in order.
func distinct(es []uint32) []uint32 {
	var out []uint32
	seen := map[uint32]bool{}
	for _, e := range es {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// stdioMoves are the runs of "rawwasi stdiomove NAME": renumberings of
// stdio, each run in a call of its own, as it leaves stdio moved. Each
// prints one line, NAME and what it got. main.go's descriptors: /work at
// 3, /ro at 4, and the first file opened at 5.
var stdioMoves = map[string]func(){
	// A file renumbered onto the number stderr was moved to, and then
	// renumbered on: the number a file is opened at next reads it.
	"file-onto-moved-then-on": func() {
		f, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		e1 := fdRenumber(2, f)
		g, _ := open(3, "g.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
		e2 := fdRenumber(g, f)
		h, _ := open(3, "h.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
		e3 := fdRenumber(f, h)
		k, e4 := open(3, "inside.txt", 0, rightFdRead, 0)
		s, e5 := read(k)
		say("file-onto-moved-then-on", e1, e2, e3, e4, s, e5)
	},
	// A file renumbered onto stderr's new number writes there, stderr
	// is closed, and the number it left is free for the next file.
	"file-onto-moved": func() {
		f, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		e1 := fdRenumber(2, f)
		g, _ := open(3, "g.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
		e2 := fdRenumber(g, f)
		_, e3 := stat(2)
		_, e4 := stat(g)
		e5 := write(f, "g")
		e6 := fdClose(f)
		k, _ := open(3, "g.txt", 0, rightFdRead, 0)
		s, e7 := read(k)
		say("file-onto-moved", e1, e2, e3, e4, e5, e6, k, s, e7)
	},
	// A file renumbered onto /ro's preopen, where stderr was moved:
	// stderr and the preopen are closed, and the file is no preopen.
	"file-onto-moved-preopen": func() {
		e1 := fdRenumber(2, 4)
		g, _ := open(3, "g.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
		e2 := fdRenumber(g, 4)
		_, e3 := open(4, "ro.txt", 0, rightFdRead, 0)
		_, e4 := stat(2)
		say("file-onto-moved-preopen", e1, e2, write(4, "g"), prestat(4), e3, e4, fdClose(4))
	},
	// stderr moved on twice, then back onto the number it left: that
	// is closed; closing where it is frees both numbers.
	"chain": func() {
		a, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		b, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		e1, e2, e3 := fdRenumber(2, a), fdRenumber(a, b), fdRenumber(b, 2)
		e4 := write(b, "chain\n")
		_, e5 := stat(a)
		e6, e7 := fdClose(b), fdClose(b)
		k, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		s, e8 := read(k)
		say("chain", e1, e2, e3, e4, e5, e6, e7, k, s, e8)
	},
	// stdin and stderr moved, then the one onto the other: stderr is
	// closed, 0, 2 and the number stdin left are closed, and the
	// numbers come back as files are opened and stdin closed.
	"alias-onto-alias": func() {
		a, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		b, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		e1, e2, e3 := fdRenumber(0, a), fdRenumber(2, b), fdRenumber(a, b)
		_, e4 := read(b)
		_, s0 := stat(0)
		_, s2 := stat(2)
		_, sa := stat(a)
		k, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		e5 := fdClose(b)
		k2, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		s, e6 := read(k2)
		say("alias-onto-alias", e1, e2, e3, e4, s0, s2, sa, k, e5, k2, s, e6)
	},
	// stderr moved onto /ro's preopen, then onto /work's: neither
	// preopen is reached by its number, a preopen is not moved onto
	// stderr's number, and closing it closes /work.
	"onto-preopens": func() {
		e1 := fdRenumber(2, 4)
		e2 := write(4, "ro\n")
		_, e3 := open(4, "ro.txt", 0, rightFdRead, 0)
		e4 := fdRenumber(3, 4)
		e5 := fdRenumber(4, 3)
		_, e6 := open(3, "inside.txt", 0, rightFdRead, 0)
		e7, e8 := prestat(3), prestat(4)
		e9 := fdClose(3)
		_, e10 := open(3, "inside.txt", 0, rightFdRead, 0)
		say("onto-preopens", e1, e2, e3, e4, e5, e6, e7, e8, e9, prestat(3), e10)
	},
	// stderr's rights narrowed through the number it was moved to stay
	// narrowed as it moves on; the next file at 2 has its own.
	"narrowed": func() {
		f, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		g, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		e1, e2 := fdRenumber(2, f), fdFdstatSetRights(f, 0, 0)
		e3, e4 := write(f, "x"), fdRenumber(f, g)
		st, e5 := stat(g)
		e6, e7 := write(g, "x"), fdClose(g)
		k, _ := open(3, "k.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
		say("narrowed", e1, e2, e3, e4, e5, st.base, e6, e7, k, write(k, "k"))
	},
	// Every function taking a descriptor finds the number stderr left
	// closed (the distinct errnos it got), and closing where it went
	// gives the number back.
	"hidden-everywhere": func() {
		f, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		e1 := fdRenumber(2, f)
		buf := make([]byte, 256)
		buf[0] = 'x'
		p := uint32(uintptr(unsafe.Pointer(&buf[0])))
		es := distinct(hiddenCalls(2, 3, p))
		say("hidden-everywhere", e1, es, fdClose(f), prestat(2))
	},
	// stderr moved, then the call ends otherwise than by returning: a
	// trap (a load past the end of memory), an exit with status 3, a
	// loop until the call is stopped.
	"then-trap": func() {
		f, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		fdRenumber(2, f)
		size := uintptr(wasmMemorySize()) * 65536
		say("then-trap", *(*byte)(unsafe.Pointer(size + 16)))
	},
	"then-exit": func() {
		f, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		fdRenumber(2, f)
		os.Exit(3)
	},
	"then-spin": func() {
		f, _ := open(3, "inside.txt", 0, rightFdRead, 0)
		fdRenumber(2, f)
		os.Stdout.WriteString("spinning\n")
		for n := 0; ; n++ {
			spun = n
		}
	},
}

// spun keeps then-spin's loop.
var spun int

// stdioMove runs the stdio move name.
func stdioMove(name string) {
	run, ok := stdioMoves[name]
	if !ok {
		say("stdiomove", "no such move", name)
		return
	}
	run()
}
