package main

import "strconv"

//go:wasmimport wasi_snapshot_preview1 proc_exit
func procExit(code uint32)

// exitWith calls proc_exit with the status code, a decimal uint32 (see
// TestGuestExitCodeIsNotAStop).
func exitWith(code string) {
	n, _ := strconv.ParseUint(code, 10, 32)
	procExit(uint32(n))
}
