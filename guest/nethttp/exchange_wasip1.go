//go:build wasip1

package nethttp

import (
	"errors"
	"unsafe"
)

//go:wasmimport cairn_net round_trip
func roundTrip(ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport cairn_net response
func response(ptr unsafe.Pointer, n uint32) int32

// exchange hands the encoded request to the host and returns its encoded
// answer.
func exchange(in []byte) ([]byte, error) {
	var p unsafe.Pointer
	if len(in) > 0 {
		p = unsafe.Pointer(&in[0])
	}
	n := roundTrip(p, uint32(len(in)))
	out := make([]byte, n)
	if n == 0 || response(unsafe.Pointer(&out[0]), n) != int32(n) {
		return nil, errors.New("the host kept no response for this request")
	}
	return out, nil
}
