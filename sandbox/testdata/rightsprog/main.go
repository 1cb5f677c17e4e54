// Command rightsprog asks for, narrows and uses the rights of WASI
// preview 1 descriptors in the directory named by its first argument,
// which holds inside.txt, and prints one line per step: the step and what
// it got (an errno is its number: 76 is ENOTCAPABLE). The sandbox's tests
// run it on plain mounts and on overlays.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"
)

const (
	rightFdRead              = 1 << 1
	rightFdWrite             = 1 << 6
	rightPathFilestatSetSize = 1 << 19
	fdflagSync               = 1 << 4
	oflagTrunc               = 1 << 3
)

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_get
func fdFdstatGet(fd int32, stat unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_fdstat_set_rights
func fdFdstatSetRights(fd int32, base, inheriting uint64) uint32

//go:wasmimport wasi_snapshot_preview1 path_open
func pathOpen(fd int32, dirflags uint32, path unsafe.Pointer, pathLen uint32, oflags uint32,
	base, inheriting uint64, fdflags uint32, opened unsafe.Pointer) uint32

//go:wasmimport wasi_snapshot_preview1 fd_write
func fdWrite(fd int32, iovs unsafe.Pointer, iovsLen uint32, written unsafe.Pointer) uint32

type fdstat struct {
	filetype         uint8
	flags            uint16
	base, inheriting uint64
}

func stat(fd int32) fdstat {
	var st fdstat
	if errno := fdFdstatGet(fd, unsafe.Pointer(&st)); errno != 0 {
		fmt.Printf("fdstat of %d: errno %d\n", fd, errno)
		os.Exit(1)
	}
	return st
}

func open(dir int32, name string, oflags uint32, base uint64) (int32, uint32) {
	var fd int32
	b := []byte(name)
	errno := pathOpen(dir, 0, unsafe.Pointer(&b[0]), uint32(len(b)), oflags, base, base, 0, unsafe.Pointer(&fd))
	return fd, errno
}

func write(fd int32, s string) uint32 {
	b := []byte(s)
	iov := [2]uint32{uint32(uintptr(unsafe.Pointer(&b[0]))), uint32(len(b))}
	var n uint32
	return fdWrite(fd, unsafe.Pointer(&iov), 1, unsafe.Pointer(&n))
}

func check(what string, err error) {
	if err != nil {
		fmt.Printf("%s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	dir := os.Args[1]

	// Go opens a directory as a read-only file, then creates and
	// truncates files in it.
	root, err := os.OpenRoot(dir)
	check("open root", err)
	f, err := root.Create("made.txt")
	check("create in root", err)
	_, err = f.WriteString("made")
	check("write in root", err)
	check("close", f.Close())
	f, err = root.OpenFile("made.txt", os.O_WRONLY|os.O_TRUNC, 0)
	check("truncate in root", err)
	check("close", f.Close())
	fmt.Println("root ok")

	f, err = os.Open(filepath.Join(dir, "inside.txt"))
	check("open inside.txt", err)
	st := stat(int32(f.Fd()))
	fmt.Println("read-only", st.base&rightFdRead != 0, st.base&rightFdWrite != 0, write(int32(f.Fd()), "x"))
	check("close", f.Close())

	f, err = os.OpenFile(filepath.Join(dir, "sync.txt"), os.O_CREATE|os.O_WRONLY|os.O_SYNC, 0o644)
	check("open sync.txt", err)
	fmt.Println("sync", stat(int32(f.Fd())).flags&fdflagSync != 0)

	fd := int32(f.Fd())
	st = stat(fd)
	fmt.Println("narrow", fdFdstatSetRights(fd, st.base&^rightFdWrite, st.inheriting), write(fd, "x"),
		fdFdstatSetRights(fd, st.base, st.inheriting))
	check("close", f.Close())

	d, err := os.Open(dir)
	check("open dir", err)
	dfd := int32(d.Fd())
	st = stat(dfd)
	fmt.Print("inherit ", fdFdstatSetRights(dfd, st.base, st.inheriting&^rightFdWrite))
	fd, errno := open(dfd, "inside.txt", 0, rightFdRead|rightFdWrite)
	fmt.Println("", errno, stat(fd).base&rightFdWrite != 0, write(fd, "x"))

	fmt.Print("trunc ", fdFdstatSetRights(dfd, st.base&^rightPathFilestatSetSize, st.inheriting&^rightFdWrite))
	_, errno = open(dfd, "inside.txt", oflagTrunc, rightFdRead)
	fmt.Println("", errno, fdFdstatSetRights(dfd, st.base, st.inheriting&^rightFdWrite))
}
