// Command netbig hands the host's network import a request message past
// the most the ABI carries, as a module not built on guest/nethttp may,
// and prints the error it is answered with.
package main

import (
	"fmt"
	"os"
	"unsafe"

	"github.com/cairnrun/cairn/abi"
)

//go:wasmimport cairn_net round_trip
func roundTrip(ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport cairn_net response
func response(ptr unsafe.Pointer, n uint32) int32

func main() {
	in := make([]byte, abi.MaxNetMessage+1)
	n := roundTrip(unsafe.Pointer(&in[0]), uint32(len(in)))
	out := make([]byte, n)
	if n == 0 || response(unsafe.Pointer(&out[0]), n) != int32(n) {
		fmt.Println("no response")
		os.Exit(1)
	}
	resp, err := abi.DecodeHTTPResponse(out)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println(resp.Error)
}
