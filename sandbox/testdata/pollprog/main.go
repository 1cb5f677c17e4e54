// Command pollprog calls WASI preview 1's poll_oneoff with a clock of 10
// seconds and, besides it, the descriptors its steps name, and prints one
// line per step: the step, the errno of the call, and each event it got
// as userdata:type:errno (type 0 is the clock, 1 fd_read, 2 fd_write).
// Userdata is the subscription's place in the step, from 1, and 99 for
// the clock. The file its first argument names is opened to write and
// subscribed to read and to write.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 poll_oneoff
func pollOneoff(in, out unsafe.Pointer, n uint32, nevents unsafe.Pointer) uint32

const (
	clock   = 0
	fdRead  = 1
	fdWrite = 2
)

type sub struct {
	typ byte
	fd  uint32
}

func poll(name string, subs ...sub) {
	subs = append(subs, sub{typ: clock})
	in := make([]byte, 48*len(subs))
	for i, s := range subs {
		b := in[48*i:]
		b[8] = s.typ
		if s.typ == clock {
			binary.LittleEndian.PutUint64(b, 99)
			binary.LittleEndian.PutUint32(b[16:], 1)              // monotonic
			binary.LittleEndian.PutUint64(b[24:], 10_000_000_000) // 10 s
			continue
		}
		binary.LittleEndian.PutUint64(b, uint64(i+1))
		binary.LittleEndian.PutUint32(b[16:], s.fd)
	}
	out := make([]byte, 32*len(subs))
	var n uint32
	errno := pollOneoff(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), uint32(len(subs)), unsafe.Pointer(&n))
	line := fmt.Sprintf("%s %d", name, errno)
	for i := range min(n, uint32(len(subs))) {
		e := out[32*i:]
		line += fmt.Sprintf(" %d:%d:%d", binary.LittleEndian.Uint64(e), e[10], binary.LittleEndian.Uint16(e[8:]))
	}
	fmt.Println(line)
}

func main() {
	poll("stdin", sub{typ: fdRead, fd: 0})
	poll("stdout-stderr", sub{typ: fdWrite, fd: 1}, sub{typ: fdWrite, fd: 2})
	poll("closed", sub{typ: fdWrite, fd: 77})
	f, err := os.OpenFile(os.Args[1], os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fd := uint32(f.Fd())
	poll("write-only", sub{typ: fdRead, fd: fd}, sub{typ: fdWrite, fd: fd})
}
