// Command rawnet is a tool module that sends HTTP requests through the
// host's network import as it is given them, byte for byte (no net/http
// on the guest's side to parse or re-encode a URL), for the host's tests
// of what the journal and verify make of requests a hostile tool sends.
package main

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
)

//go:wasmimport cairn_net round_trip
func roundTrip(ptr unsafe.Pointer, n uint32) uint32

//go:wasmimport cairn_net response
func response(ptr unsafe.Pointer, n uint32) int32

type request struct {
	Method string              `json:"method,omitempty" desc:"the method; GET without one"`
	URL    string              `json:"url" desc:"the URL, sent as it is"`
	Header map[string][]string `json:"header,omitempty" desc:"the headers"`
	Pad    int                 `json:"pad,omitempty" desc:"append the request's number and this many bytes 'a' to the URL"`
	Repeat int                 `json:"repeat,omitempty" desc:"send it this many times (1 without)"`
}

type sendIn struct {
	Requests []request `json:"requests" desc:"the requests, in order"`
}

// send makes one exchange and answers with the response's status and
// body, or its error, in a line.
func send(r abi.HTTPRequest) string {
	b, err := abi.Marshal(r)
	if err != nil {
		return "encode: " + err.Error()
	}
	n := roundTrip(unsafe.Pointer(&b[0]), uint32(len(b)))
	out := make([]byte, n+1)
	got := response(unsafe.Pointer(&out[0]), n)
	if got < 0 {
		return "no response"
	}
	resp, err := abi.DecodeHTTPResponse(out[:got])
	switch {
	case err != nil:
		return "decode: " + err.Error()
	case resp.Error != "":
		return "error: " + resp.Error
	}
	return fmt.Sprintf("%d %s", resp.Status, resp.Body)
}

func main() {
	guest.Main(
		guest.Define("send", "Sends HTTP requests as given and answers with a line for each.",
			func(c *guest.Call, in sendIn) (string, error) {
				var out strings.Builder
				for _, r := range in.Requests {
					method := r.Method
					if method == "" {
						method = "GET"
					}
					for k := range max(r.Repeat, 1) {
						url := r.URL
						if r.Pad > 0 {
							url += fmt.Sprint(k) + strings.Repeat("a", r.Pad)
						}
						out.WriteString(send(abi.HTTPRequest{ABI: abi.Version, Method: method, URL: url, Header: r.Header}) + "\n")
					}
				}
				return out.String(), nil
			}, guest.Needs(abi.Needs{Net: []string{"127.0.0.1"}})),
	)
}
