package main

import (
	"unsafe"
)

// removed opens /work's directory NAME (made first if NAME is "+" and
// its name), removes it, and then lists it,
// describes it and makes a file and a directory in it through its
// descriptor, then makes another directory NAME and lists the first
// again, printing the errno of each (and the bytes listed; see
// TestReaddirOfRemovedDirectoryAnswersAsLinux).
func removed(name string) {
	if name[0] == '+' {
		name = name[1:]
		m := []byte(name)
		say("removed-made", pathCreateDirectory(3, uint32(uintptr(unsafe.Pointer(&m[0]))), uint32(len(m))))
	}
	d, e := open(3, name, oflagDirectory, rightFdRead|1<<14|1<<13|1<<10|1<<9|1<<21|1<<18, 0)
	say("removed-open", e)
	p := []byte(name)
	say("removed-rmdir", pathRemoveDirectory(3, uint32(uintptr(unsafe.Pointer(&p[0]))), uint32(len(p))))
	buf := make([]byte, 256)
	var used uint32
	e = fdReaddir(d, uint32(uintptr(unsafe.Pointer(&buf[0]))), 256, 0, uint32(uintptr(unsafe.Pointer(&used))))
	say("removed-readdir", e, used)
	var st [64]byte
	say("removed-filestat", fdFilestatGet(d, uint32(uintptr(unsafe.Pointer(&st[0])))))
	_, e = open(d, "new.txt", oflagCreat, rightFdRead|rightFdWrite, 0)
	say("removed-create", e)
	q := []byte("newdir")
	say("removed-mkdir", pathCreateDirectory(d, uint32(uintptr(unsafe.Pointer(&q[0]))), uint32(len(q))))
	say("removed-remade", pathCreateDirectory(3, uint32(uintptr(unsafe.Pointer(&p[0]))), uint32(len(p))))
	used = 0
	e = fdReaddir(d, uint32(uintptr(unsafe.Pointer(&buf[0]))), 256, 0, uint32(uintptr(unsafe.Pointer(&used))))
	say("removed-readdir-remade", e, used)
}
