package main

import (
	"os"
	"unsafe"
)

// dirRights are the rights a directory is opened with here: to open,
// create, describe, list, rename in and remove in it.
const dirRights = rightFdRead | rightPathOpen | rightPathCreateFile | 1<<9 | 1<<14 | 1<<16 | 1<<17 |
	1<<18 | 1<<21 | 1<<25 | 1<<26

func ptr(s string) (uint32, uint32) {
	b := []byte(s)
	return uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))
}

func rename(fd int32, from string, to int32, name string) uint32 {
	p, n := ptr(from)
	q, m := ptr(name)
	return pathRename(fd, p, n, to, q, m)
}

func mkdir(fd int32, name string) uint32 {
	p, n := ptr(name)
	return pathCreateDirectory(fd, p, n)
}

func fstat(fd int32, name string) uint32 {
	var st [64]byte
	p, n := ptr(name)
	return pathFilestatGet(fd, 0, p, n, uint32(uintptr(unsafe.Pointer(&st[0]))))
}

func create(fd int32, name string) uint32 {
	f, e := open(fd, name, oflagCreat, rightFdRead|rightFdWrite, 0)
	if e == 0 {
		e = write(f, name)
		fdClose(f)
	}
	return e
}

func listed(fd int32) (uint32, uint32) {
	buf := make([]byte, 1024)
	var used uint32
	e := fdReaddir(fd, uint32(uintptr(unsafe.Pointer(&buf[0]))), 1024, 0, uint32(uintptr(unsafe.Pointer(&used))))
	return e, used
}

// dirMove opens /work's directory d (holding in.txt), renames it and the
// directories above what it opens in it, and uses each descriptor after,
// printing the errno of each call (see TestDirectoryFollowsItsRenames),
// paths with "." and ".." among them:
// on Linux a descriptor keeps to its directory, renamed or not. Then it
// writes "move" to stderr, for the test to move the directory out of the
// mount, and uses the descriptor again.
func dirMove() {
	d, e := open(3, "d", oflagDirectory, dirRights, 0)
	say("dirmove-open", e)
	say("dirmove-rename", rename(3, "d", 3, "e"))
	say("dirmove-stat", fstat(d, "in.txt"))
	say("dirmove-create", create(d, "made.txt"))
	say("dirmove-remake", mkdir(3, "d"))
	say("dirmove-create-again", create(d, "made2.txt"))
	say("dirmove-mkdir", mkdir(d, "sub"))
	s, e := open(d, "sub", oflagDirectory, dirRights, 0)
	say("dirmove-open-sub", e)
	say("dirmove-rename-above", rename(3, "e", 3, "f"))
	say("dirmove-create-sub", create(s, "deep.txt"))
	say("dirmove-rename-in", rename(d, "made.txt", s, "moved.txt"))
	e, used := listed(d)
	say("dirmove-readdir", e, used > 0)
	say("dirmove-dots", fstat(d, "sub/../in.txt"), fstat(s, "../in.txt"), fstat(d, "./sub/."))
	// A directory renamed over the one a descriptor holds: that one is gone.
	say("dirmove-mkdir-empty", mkdir(3, "empty"))
	x, e := open(3, "empty", oflagDirectory, dirRights, 0)
	say("dirmove-open-empty", e)
	say("dirmove-mkdir-other", mkdir(3, "other"))
	say("dirmove-rename-over", rename(3, "other", 3, "empty"))
	say("dirmove-create-over", create(x, "lost.txt"))
	os.Stderr.WriteString("move\n")
	say("dirmove-out-stat", fstat(d, "in.txt"))
	say("dirmove-out-create", create(d, "escaped.txt"))
	say("dirmove-out-mkdir", mkdir(s, "escaped"))
	e, used = listed(d)
	say("dirmove-out-readdir", e, used > 0)
	say("dirmove-out-times", fdFilestatSetTimes(d, 1e9, 1e9, 1|4))
}
