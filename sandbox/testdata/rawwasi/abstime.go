package main

import (
	"encoding/binary"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 clock_time_get
func clockTimeGet(id uint32, precision uint64, at unsafe.Pointer) uint32

// absTime polls one clock subscription with the flag abstime (a time of
// its clock, as wasi-libc's clock_nanosleep with TIMER_ABSTIME asks) at a
// time 200 ms on of the monotonic clock, one past, and one of a clock
// that is not there, then one relative clock subscription (a timeout of
// 1 ns) of a clock that is not there, and prints the errno of each, the events it got,
// the event's errno and, for the first, whether the clock read the time
// once it was done (see TestPollOfAnAbsoluteTimeWaitsForIt).
func absTime() {
	var now uint64
	clockTimeGet(1, 0, unsafe.Pointer(&now))
	for _, c := range []struct {
		name string
		id   uint32
		at   uint64
		abs  bool
	}{{"abstime-later", 1, now + 200_000_000, true}, {"abstime-past", 1, now / 2, true}, {"abstime-no-clock", 9, now, true},
		{"relative-no-clock", 9, 1, false}} {
		var sub [48]byte
		var ev [32]byte
		binary.LittleEndian.PutUint64(sub[0:], 42)
		binary.LittleEndian.PutUint32(sub[16:], c.id)
		binary.LittleEndian.PutUint64(sub[24:], c.at)
		if c.abs {
			binary.LittleEndian.PutUint16(sub[40:], 1)
		}
		var nev uint32
		e := pollOneoff(uint32(uintptr(unsafe.Pointer(&sub[0]))), uint32(uintptr(unsafe.Pointer(&ev[0]))), 1,
			uint32(uintptr(unsafe.Pointer(&nev))))
		var after uint64
		clockTimeGet(1, 0, unsafe.Pointer(&after))
		say(c.name, e, nev, binary.LittleEndian.Uint16(ev[8:]), after >= c.at || !c.abs)
	}
}
