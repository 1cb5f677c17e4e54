//go:build wasip1

package guest

import (
	"bytes"
	"os"
	"strings"
	"unsafe"
)

// call is the fast mode's entry point (abi.CallExport): one call, served
// from stdin to stdout like Main, returning what Main would exit with.
//
// The host runs it in a fresh instance restored from a snapshot taken
// after the module's initialisation, so the Go runtime's copies of the
// arguments and the environment are those of initialisation. call reads
// both again from WASI first, so a call sees its own.
//
//go:wasmexport cairn_call
func call() int32 {
	refreshArgsAndEnv()
	return int32(serveArgs(os.Args, os.Stdin, os.Stdout, exportedTools()))
}

// refreshArgsAndEnv replaces os.Args and the environment with this
// instance's, read through WASI.
func refreshArgsAndEnv() {
	if args, ok := wasiStrings(argsSizesGet, argsGet); ok {
		os.Args = args
	}
	env, ok := wasiStrings(environSizesGet, environGet)
	if !ok {
		return
	}
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			os.Setenv(k, v)
		}
	}
}

// wasiStrings reads a list of strings the way args_get and environ_get
// give them: an array of pointers into one buffer of NUL-terminated
// strings.
func wasiStrings(sizes func(*uint32, *uint32) uint32, get func(*uint32, *byte) uint32) ([]string, bool) {
	var n, size uint32
	if sizes(&n, &size) != 0 {
		return nil, false
	}
	if n == 0 {
		return []string{}, true
	}
	ptrs := make([]uint32, n)
	buf := make([]byte, size)
	if get(&ptrs[0], &buf[0]) != 0 {
		return nil, false
	}
	base := uint32(uintptr(unsafe.Pointer(&buf[0])))
	out := make([]string, n)
	for i, p := range ptrs {
		s := buf[p-base:]
		if end := bytes.IndexByte(s, 0); end >= 0 {
			s = s[:end]
		}
		out[i] = string(s)
	}
	return out, true
}

//go:wasmimport wasi_snapshot_preview1 args_sizes_get
//go:noescape
func argsSizesGet(n, size *uint32) uint32

//go:wasmimport wasi_snapshot_preview1 args_get
//go:noescape
func argsGet(ptrs *uint32, buf *byte) uint32

//go:wasmimport wasi_snapshot_preview1 environ_sizes_get
//go:noescape
func environSizesGet(n, size *uint32) uint32

//go:wasmimport wasi_snapshot_preview1 environ_get
//go:noescape
func environGet(ptrs *uint32, buf *byte) uint32
