package main

import (
	"encoding/binary"
	"strconv"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 clock_res_get
func clockResGet(id uint32, at unsafe.Pointer) uint32

// clocks asks clock_res_get and clock_time_get of the clock ids 0 to 4
// (realtime, monotonic, process and thread CPU time, and one WASI has
// not), and prints, for each, their errnos, whether the resolution is
// above 0, and whether a second reading is not before the first, and
// the errno of poll_oneoff of a clock of 1 ns of each (see
// TestCPUClocksAnswer).
func clocks() {
	for id := uint32(0); id < 5; id++ {
		var res, t1, t2 uint64
		eres := clockResGet(id, unsafe.Pointer(&res))
		e1 := clockTimeGet(id, 0, unsafe.Pointer(&t1))
		clockTimeGet(id, 0, unsafe.Pointer(&t2))
		say("clock-"+strconv.Itoa(int(id)), eres, e1, res > 0, t2 >= t1)
		var sub [48]byte
		var ev [32]byte
		var nev uint32
		binary.LittleEndian.PutUint32(sub[16:], id)
		binary.LittleEndian.PutUint64(sub[24:], 1)
		say("clock-poll-"+strconv.Itoa(int(id)), pollOneoff(uint32(uintptr(unsafe.Pointer(&sub[0]))),
			uint32(uintptr(unsafe.Pointer(&ev[0]))), 1, uint32(uintptr(unsafe.Pointer(&nev)))))
	}
}
