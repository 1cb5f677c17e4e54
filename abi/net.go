package abi

import (
	"fmt"
	"unicode/utf8"
)

// NetModule is the module name of the network import, and NetRoundTrip and
// NetResponse its two functions (see the package doc, "The network").
const (
	NetModule    = "cairn_net"
	NetRoundTrip = "round_trip"
	NetResponse  = "response"
)

// MaxNetMessage bounds one HTTPRequest or HTTPResponse as the network
// import exchanges them, body included.
const MaxNetMessage = MaxMessageSize

// HTTPRequest is one HTTP request a module asks the host to send.
type HTTPRequest struct {
	ABI    int    `cbor:"abi" json:"abi"`
	Method string `cbor:"method" json:"method"`
	URL    string `cbor:"url" json:"url"`
	// Header maps canonical header names to their values.
	Header map[string][]string `cbor:"header,omitempty" json:"header,omitempty"`
	Body   []byte              `cbor:"body,omitempty" json:"body,omitempty"`
}

// HTTPResponse is the host's answer to an HTTPRequest: the response, or,
// when Error is set, why there is none (refused by the grant, a limit, a
// connection that failed). Status is then 0.
type HTTPResponse struct {
	ABI    int                 `cbor:"abi" json:"abi"`
	Status int                 `cbor:"status,omitempty" json:"status,omitempty"`
	Header map[string][]string `cbor:"header,omitempty" json:"header,omitempty"`
	Body   []byte              `cbor:"body,omitempty" json:"body,omitempty"`
	Error  string              `cbor:"error,omitempty" json:"error,omitempty"`
}

// DecodeHTTPRequest decodes one HTTPRequest, as strictly as a Request.
//
// # Errors
//
// Bytes that are not one CBOR map of an HTTPRequest within MaxNetMessage,
// a newer ABI version, or a request without a method or URL.
func DecodeHTTPRequest(b []byte) (HTTPRequest, error) {
	var r HTTPRequest
	d := reading(b, MaxNetMessage, false)
	r.read(&d)
	if err := d.end(); err != nil {
		return r, fmt.Errorf("decode HTTP request: %w", err)
	}
	if r.ABI > Version {
		return r, fmt.Errorf("HTTP request for ABI %d, this host speaks %d", r.ABI, Version)
	}
	if r.Method == "" || r.URL == "" {
		return r, fmt.Errorf("HTTP request without a method or URL")
	}
	return r, nil
}

// DecodeHTTPResponse decodes one HTTPResponse. Its header's names and
// values, and its error, may be text strings that are not UTF-8, or byte
// strings, as hosts that did not make them UTF-8 sent them: a header's
// are read by HeaderText, the error by ValidText.
func DecodeHTTPResponse(b []byte) (HTTPResponse, error) {
	var r HTTPResponse
	d := reading(b, MaxNetMessage, true)
	r.read(&d)
	if err := d.end(); err != nil {
		return r, fmt.Errorf("decode HTTP response: %w", err)
	}
	r.Header, r.Error = headerText(r.Header), ValidText(r.Error)
	return r, nil
}

// headerText is h with its names and values read by HeaderText: h itself
// when they are all UTF-8.
func headerText(h map[string][]string) map[string][]string {
	valid := true
	for k, vs := range h {
		valid = valid && utf8.ValidString(k)
		for _, v := range vs {
			valid = valid && utf8.ValidString(v)
		}
	}
	if valid {
		return h
	}
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		text := make([]string, len(vs))
		for i, v := range vs {
			text[i] = HeaderText(v)
		}
		out[HeaderText(k)] = append(out[HeaderText(k)], text...)
	}
	return out
}
