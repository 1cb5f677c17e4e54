package abi

import (
	"bytes"
	"testing"
)

func TestHTTPRequestRoundTrip(t *testing.T) {
	in := HTTPRequest{ABI: Version, Method: "POST", URL: "https://api.example.com/x",
		Header: map[string][]string{"Content-Type": {"text/plain"}}, Body: []byte("hi")}
	b, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeHTTPRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if out.Method != in.Method || out.URL != in.URL || !bytes.Equal(out.Body, in.Body) || out.Header["Content-Type"][0] != "text/plain" {
		t.Fatalf("got %+v", out)
	}
}

func TestDecodeHTTPRequestRefuses(t *testing.T) {
	newer, _ := Marshal(HTTPRequest{ABI: Version + 1, Method: "GET", URL: "http://x/"})
	noURL, _ := Marshal(HTTPRequest{ABI: Version, Method: "GET"})
	for name, b := range map[string][]byte{"empty": nil, "junk": {0xff, 0x00}, "newer": newer, "no url": noURL,
		"trailing": append(append([]byte{}, noURL...), 0)} {
		if _, err := DecodeHTTPRequest(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func FuzzDecodeHTTPRequest(f *testing.F) {
	b, _ := Marshal(HTTPRequest{ABI: Version, Method: "GET", URL: "http://x/", Header: map[string][]string{"A": {"b"}}})
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeHTTPRequest(b)
		if err != nil {
			return
		}
		again, err := Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeHTTPRequest(again); err != nil {
			t.Fatalf("re-encoded request does not decode: %v", err)
		}
	})
}
