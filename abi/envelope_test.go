package abi

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// texts are strings around every length at which a CBOR head changes
// size, and ones that are not UTF-8.
var texts = []string{"", "x", strings.Repeat("a", 23), strings.Repeat("b", 24), strings.Repeat("c", 255),
	strings.Repeat("d", 256), strings.Repeat("e", 65535), strings.Repeat("f", 65536), "héllo\n\x00", "\xff\xfe", "ok\xc3"}

// The envelopes written by hand are the bytes the library writes, and
// read back as they were written.
func TestEnvelopeIsTheLibrarys(t *testing.T) {
	versions := []int{0, Version, 23, 24, 1 << 20, 1 << 40, -1}
	for _, s := range texts {
		for _, v := range versions {
			req := Request{ABI: v, Tool: s, CallID: "call_" + s, Input: s + "{}", Workspace: WorkspaceDir + s}
			checkEnvelope(t, req, encodeRequest, decodeRequest)
			for _, e := range []string{"", s, "failed"} {
				resp := Response{ABI: v, Output: s, Error: e}
				checkEnvelope(t, resp, encodeResponse, decodeResponse)
			}
		}
	}
}

// A message past MaxMessageSize is refused, in its canonical form too.
func TestEnvelopeOverTheLimit(t *testing.T) {
	big := strings.Repeat("x", MaxMessageSize)
	req, _ := Marshal(Request{ABI: Version, Tool: "t", Input: big})
	if _, err := DecodeRequest(req); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a request of %d bytes: %v", len(req), err)
	}
	resp, _ := Marshal(Response{ABI: Version, Output: big})
	if _, err := DecodeResponse(resp); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a response of %d bytes: %v", len(resp), err)
	}
}

func checkEnvelope[T comparable](t *testing.T, v T, encode func(T) ([]byte, bool), decode func([]byte) (T, bool)) {
	t.Helper()
	want, err := encMode.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	abi, isUTF8 := envelopeFacts(v)
	got, ok := encode(v)
	if !ok {
		if abi >= 0 {
			t.Errorf("%.60v: left to the library", v)
		}
		return
	}
	if string(got) != string(want) {
		t.Errorf("%.60v: encoded to %x, the library to %x", v, trim(got), trim(want))
	}
	// Text that is not UTF-8 is written as it is, and refused when read,
	// as the library does.
	if back, ok := decode(want); ok != isUTF8 || (ok && back != v) {
		t.Errorf("%.60v: read back as %.60v (%v)", v, back, ok)
	}
}

// envelopeFacts returns v's version and whether all its text is UTF-8.
func envelopeFacts(v any) (int, bool) {
	switch v := v.(type) {
	case Request:
		return v.ABI, validText(v.Tool, v.CallID, v.Input, v.Workspace)
	case Response:
		return v.ABI, validText(v.Output, v.Error)
	}
	panic("not an envelope")
}

func validText(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func trim(b []byte) []byte { return b[:min(len(b), 40)] }

// FuzzEnvelope holds the fast path to the library's: whatever bytes the
// fast path reads, the library reads as the same envelope; whatever
// envelope it writes, the library writes as the same bytes.
func FuzzEnvelope(f *testing.F) {
	good, _ := encMode.Marshal(Request{ABI: Version, Tool: "t", CallID: "c", Input: "{}", Workspace: WorkspaceDir})
	resp, _ := encMode.Marshal(Response{ABI: Version, Output: "out", Error: "bad"})
	f.Add(good, "t", 1)
	f.Add(resp, "\xff", 0)
	f.Add([]byte{0xa1, 0x63, 'a', 'b', 'i', 0x18, 0x01}, "", 24) // a non-minimal head
	f.Add([]byte{0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x63, 'a', 'b', 'i', 0x01}, "x", 2)
	f.Fuzz(func(t *testing.T, b []byte, s string, v int) {
		if r, ok := decodeRequest(b); ok {
			var lib Request
			if err := unmarshal(b, &lib); err != nil || lib != r {
				t.Fatalf("fast path read %x as %+v; the library as %+v (%v)", b, r, lib, err)
			}
		}
		if r, ok := decodeResponse(b); ok {
			var lib Response
			if err := unmarshal(b, &lib); err != nil || lib != r {
				t.Fatalf("fast path read %x as %+v; the library as %+v (%v)", b, r, lib, err)
			}
		}
		if r, err := DecodeResponse(b); err == nil && !validText(r.Output, r.Error) {
			t.Fatalf("DecodeResponse read %x as text that is not UTF-8: %+v", b, r)
		}
		req := Request{ABI: v, Tool: s, CallID: s, Input: string(b), Workspace: s}
		checkEnvelope(t, req, encodeRequest, decodeRequest)
		r := Response{ABI: v, Output: string(b), Error: s}
		checkEnvelope(t, r, encodeResponse, decodeResponse)
	})
}

// BenchmarkEnvelope is a call's envelopes through the fast path and
// through the CBOR library alone (the baseline), in the same run: decoding
// a read_file request, and encoding and decoding its 3 KB response. In
// wasm, where the fast path pays off, run it with
// `go test ./sandbox -run '^$' -bench EnvelopeInWasm`.
//
//	go test ./abi -run '^$' -bench Envelope
func BenchmarkEnvelope(b *testing.B) {
	req, _ := encMode.Marshal(Request{ABI: Version, Tool: "read_file", CallID: "call_1_0", Input: `{"path":"f.txt"}`, Workspace: WorkspaceDir})
	resp := Response{ABI: Version, Output: strings.Repeat("     1\ta line of text in the file\n", 90)}
	out, _ := encMode.Marshal(resp)
	refused := errors.New("the fast path refused it")
	ops := []struct {
		name          string
		fast, library func() error
	}{
		{"decode-request", func() error {
			if _, ok := decodeRequest(req); !ok {
				return refused
			}
			return nil
		}, func() error { var r Request; return decMode.Unmarshal(req, &r) }},
		{"encode-response", func() error {
			if _, ok := encodeResponse(resp); !ok {
				return refused
			}
			return nil
		}, func() error { _, err := encMode.Marshal(resp); return err }},
		{"decode-response", func() error {
			if _, ok := decodeResponse(out); !ok {
				return refused
			}
			return nil
		}, func() error { var r Response; return decMode.Unmarshal(out, &r) }},
	}
	for _, op := range ops {
		for i, fn := range []func() error{op.fast, op.library} {
			b.Run(op.name+"/"+[]string{"fast", "library"}[i], func(b *testing.B) {
				for range b.N {
					if err := fn(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A response whose output or error is not UTF-8 — text that is not, or a
// byte string — decodes, each bad sequence replaced by U+FFFD; one that is
// UTF-8 decodes as it is. (A tool that printed a Latin-1 file once failed
// its whole call: "cbor: invalid UTF-8 string".)
func TestDecodeResponseRepairsText(t *testing.T) {
	bytesOutput := []byte{0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x66, 'o', 'u', 't', 'p', 'u', 't', 0x44, 'c', 'a', 'f', 0xe9}
	for _, tt := range []struct {
		name        string
		msg         []byte
		output, err string
	}{
		{"text", must(Marshal(Response{ABI: Version, Output: "caf\xe9 ok", Error: ""})), "caf\uFFFD ok", ""},
		{"error-text", must(Marshal(Response{ABI: Version, Output: "x", Error: "bad \xff\xfe"})), "x", "bad \uFFFD"},
		{"byte-string", bytesOutput, "caf\uFFFD", ""},
		{"valid", must(Marshal(Response{ABI: Version, Output: "héllo"})), "héllo", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeResponse(tt.msg)
			if err != nil || r.Output != tt.output || r.Error != tt.err {
				t.Fatalf("got %+v, %v; want output %q, error %q", r, err, tt.output, tt.err)
			}
		})
	}
	// Requests and manifests stay strict.
	req := must(Marshal(Request{ABI: Version, Tool: "t\xff"}))
	if _, err := DecodeRequest(req); err == nil {
		t.Fatal("a request that is not UTF-8 decoded")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
