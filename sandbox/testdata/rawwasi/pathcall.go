package main

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// pathCall makes one call on path (and to, for rename) under /work (fd 3)
// and prints its errno and what it found: for stat and lstat
// (path_filestat_get following or not) the filetype and inode, for the
// opens the inode of what was opened, for readlink the link's text, for
// writedir the errnos of fd_write and fd_pwrite, for resizedir those of
// fd_allocate and fd_filestat_set_size, and for lsettimes the times set.
func pathCall(op, path, to string) {
	at := func(p string) (uint32, uint32) {
		b := []byte(p + "\x00")
		return uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(p))
	}
	p, n := at(path)
	var st [64]byte
	stp := uint32(uintptr(unsafe.Pointer(&st[0])))
	described := func(e uint32) {
		if e != 0 {
			say("pathcall", e)
			return
		}
		say("pathcall", e, st[16], binary.LittleEndian.Uint64(st[8:]))
	}
	opened := func(oflags uint32, dirflags uint32, rights uint64) {
		fd := int32(-1)
		e := pathOpenAt(3, dirflags, p, n, oflags, rights, rights, 0, uint32(uintptr(unsafe.Pointer(&fd))))
		if e == 0 {
			e = fdFilestatGet(fd, stp)
			fdClose(fd)
		}
		described(e)
	}
	switch op {
	case "stattop":
		// The path and the answer in the last bytes of memory, a page
		// grown for them.
		top := uint32(growMemory(1)+1) * 65536
		copy(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(top-200))), n), path)
		e := pathFilestatGet(3, 1, top-200, n, top-64)
		copy(st[:], unsafe.Slice((*byte)(unsafe.Pointer(uintptr(top-64))), 64))
		described(e)
		if got := string(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(top-200))), n)); got != path {
			say("pathcall-path", "changed to", got)
		}
	case "renametop":
		// The target 8 KiB from the end of memory, a page grown for it.
		top := uint32(growMemory(1)+1) * 65536
		copy(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(top-8192))), len(to)), to)
		say("pathcall", pathRename(3, p, n, 3, top-8192, uint32(len(to))))
	case "stat":
		described(pathFilestatGet(3, 1, p, n, stp))
	case "lstat":
		described(pathFilestatGet(3, 0, p, n, stp))
	case "open":
		opened(0, 1, rightFdRead)
	case "opendir":
		opened(oflagDirectory, 1, rightFdRead)
	case "opennofollow":
		opened(0, 0, rightFdRead)
	case "create":
		opened(oflagCreat, 1, rightFdRead|rightFdWrite)
	case "readlink":
		var buf [256]byte
		var used uint32
		e := pathReadlink(3, p, n, uint32(uintptr(unsafe.Pointer(&buf[0]))), 256, uint32(uintptr(unsafe.Pointer(&used))))
		say("pathcall", e, fmt.Sprintf("%q", buf[:used]))
	case "mkdir":
		say("pathcall", pathCreateDirectory(3, p, n))
	case "rmdir":
		say("pathcall", pathRemoveDirectory(3, p, n))
	case "unlink":
		say("pathcall", pathUnlinkFile(3, p, n))
	case "rename":
		q, m := at(to)
		say("pathcall", pathRename(3, p, n, 3, q, m))
	case "link":
		q, m := at(to)
		say("pathcall", pathLink(3, 0, p, n, 3, q, m))
	case "symlink":
		q, m := at(to)
		say("pathcall", pathSymlink(p, n, 3, q, m))
	case "writedir":
		// fd_write and fd_pwrite of /work's preopen, which has every
		// right, for the path ".".
		say("pathcall", 0, write(3, "x"), pwrite(3, 0))
	case "resizedir":
		// fd_allocate and fd_filestat_set_size of /work's preopen, for
		// the path ".".
		say("pathcall", 0, fdAllocate(3, 0, 1), fdFilestatSetSize(3, 0))
	case "lsettimes":
		// path_filestat_set_times without LOOKUP_SYMLINK_FOLLOW, then the
		// times path_filestat_get without it reads.
		e := pathFilestatSetTimes(3, 0, p, n, 1_000_000_123, 2_000_000_456, 1|4)
		if e != 0 {
			say("pathcall", e)
			return
		}
		e = pathFilestatGet(3, 0, p, n, stp)
		say("pathcall", e, binary.LittleEndian.Uint64(st[40:]), binary.LittleEndian.Uint64(st[48:]))
	default:
		say("pathcall", "no such op", op)
	}
}
