package abi

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/cairnrun/cairn/internal/strictcbor"
)

// The codec is held to a general CBOR library, set up as every other
// decoder of untrusted bytes in cairn is (internal/strictcbor): it writes
// the bytes the library's deterministic encoder writes, and reads nothing
// the library does not read as the same message.
var (
	libEnc  = strictcbor.Must(cbor.CoreDetEncOptions().EncMode())
	libDec  = strictcbor.DecMode(strictcbor.Limits{Depth: maxDepth, Elements: maxElements, Pairs: maxElements})
	libResp = strictcbor.Must(func() cbor.DecOptions {
		opts := strictcbor.Options(strictcbor.Limits{Depth: maxDepth, Elements: maxElements, Pairs: maxElements})
		opts.UTF8 = cbor.UTF8DecodeInvalid
		opts.ByteStringToString = cbor.ByteStringToStringAllowed
		return opts
	}().DecMode())
)

// texts are strings around every length at which a CBOR head changes
// size, and ones that are not UTF-8.
var texts = []string{"", "x", strings.Repeat("a", 23), strings.Repeat("b", 24), strings.Repeat("c", 255),
	strings.Repeat("d", 256), strings.Repeat("e", 65535), strings.Repeat("f", 65536), "héllo\n\x00", "\xff\xfe", "ok\xc3"}

// messages are values of every message type, with every field empty and
// set, at every size of head.
func messages() []any {
	var ms []any
	for i, s := range texts {
		for _, v := range []int{0, Version, 23, 24, 1 << 20, 1 << 40, -1, -25} {
			ms = append(ms,
				Request{ABI: v, Tool: s, CallID: "call_" + s, Input: s + "{}", Workspace: WorkspaceDir + s},
				Response{ABI: v, Output: s}, Response{ABI: v, Output: s, Error: "failed " + s},
				HTTPResponse{ABI: v, Status: v, Error: s},
			)
		}
		var body []byte
		if i%2 == 1 {
			body = []byte(s)
		}
		ms = append(ms,
			HTTPRequest{ABI: Version, Method: "GET", URL: s},
			HTTPRequest{ABI: Version, Method: "POST", URL: "http://x/", Body: body,
				Header: map[string][]string{"Content-Type": {s}, "A": {}, "B": nil, s + "X": {"1", "2"}, "bb": {s}}},
			HTTPResponse{ABI: Version, Status: 200, Body: body, Header: map[string][]string{"Z": {s}}},
			Manifest{ABI: Version, Tools: []Tool{{Name: s, Description: s, InputSchema: s}}},
		)
	}
	ms = append(ms, Manifest{}, Manifest{ABI: Version, Tools: []Tool{}}, sampleManifest(),
		Manifest{ABI: Version, Tools: []Tool{{Name: "a", Mutates: true, Idempotent: true, Needs: Needs{
			Workspace: AccessReadWrite, Env: []string{"HOME", ""}, Net: []string{"*"}, Clock: true, Random: true}},
			{Name: "b", Needs: Needs{Env: []string{}, Net: []string{"x:1"}}}}},
		HTTPRequest{}, HTTPResponse{})
	return ms
}

// Marshal writes the library's bytes, and what it writes reads back as
// the library reads it.
func TestCodecIsTheLibrarys(t *testing.T) {
	for _, m := range messages() {
		checkMessage(t, m)
	}
}

func checkMessage(t *testing.T, m any) {
	t.Helper()
	want, err := libEnc.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Marshal(m)
	if err != nil {
		t.Fatalf("%.60v: %v", m, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%.80v: encoded to %x, the library to %x", m, trim(got), trim(want))
	}
	ptr := reflect.New(reflect.TypeOf(m))
	ptr.Elem().Set(reflect.ValueOf(m))
	if again, err := Marshal(ptr.Interface()); err != nil || !bytes.Equal(again, want) {
		t.Fatalf("%.60v: through a pointer, encoded to %x (%v)", m, trim(again), err)
	}
	checkRead(t, reflect.TypeOf(m), want)
}

// checkRead reads b as a message of type typ, by hand and by the library:
// whatever the codec reads, the library reads as the same message.
func checkRead(t *testing.T, typ reflect.Type, b []byte) {
	t.Helper()
	got := reflect.New(typ)
	d := reading(b, MaxMessageSize, typ == reflect.TypeFor[Response]())
	got.Interface().(interface{ read(*decoder) }).read(&d)
	if d.end() != nil {
		return
	}
	lib := reflect.New(typ)
	mode := libDec
	if typ == reflect.TypeFor[Response]() {
		mode = libResp
	}
	if lerr := mode.Unmarshal(b, lib.Interface()); lerr != nil || !reflect.DeepEqual(got.Interface(), lib.Interface()) {
		t.Fatalf("%x: read as %+v; the library reads %+v (%v)", trim(b), got.Elem(), lib.Elem(), lerr)
	}
}

// A key the reader does not know is skipped, whatever its value; one
// written twice, or a known one in another case, is refused.
func TestCodecSkipsUnknownKeys(t *testing.T) {
	known := map[string]any{"abi": 1, "tool": "t", "call_id": "c", "input": "{}", "workspace": "/w"}
	for _, extra := range []any{nil, true, 1.5, -7, "text", []byte{1, 2}, []any{1, []any{"a", map[string]any{"k": nil}}},
		map[any]any{1: "a", "b": []any{}}} {
		m := map[string]any{"newer_field": extra}
		for k, v := range known {
			m[k] = v
		}
		b, err := libEnc.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeRequest(b)
		if err != nil || r != (Request{ABI: 1, Tool: "t", CallID: "c", Input: "{}", Workspace: "/w"}) {
			t.Errorf("an unknown key of %#v: read %+v, %v", extra, r, err)
		}
		checkRead(t, reflect.TypeFor[Request](), b)
	}
	for name, b := range map[string][]byte{
		"an unknown key twice": {0xa3, 0x63, 'a', 'b', 'i', 0x01, 0x61, 'x', 0x01, 0x61, 'x', 0x02},
		"a known key twice":    {0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x63, 'a', 'b', 'i', 0x01},
		"a key in capitals":    {0xa1, 0x63, 'A', 'B', 'I', 0x01},
		"a key twice, deeper":  {0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x61, 'x', 0xa2, 0x01, 0x00, 0x01, 0x00},
		"a tag":                {0xa1, 0x63, 'a', 'b', 'i', 0xc1, 0x01},
		"an indefinite map":    {0xbf, 0x63, 'a', 'b', 'i', 0x01, 0xff},
		"an integer key":       {0xa1, 0x01, 0x01},
		"nested too deep":      append(append([]byte{0xa1, 0x61, 'x'}, bytes.Repeat([]byte{0x81}, maxDepth)...), 0x01),
		"a float for the abi":  {0xa1, 0x63, 'a', 'b', 'i', 0xf9, 0x3c, 0x00},
		"a short simple value": {0xa1, 0x61, 'x', 0xf8, 0x01},
	} {
		if _, err := DecodeRequest(b); err == nil {
			t.Errorf("%s: read", name)
		}
	}
	// As deep as the limit is read.
	deep := append(append([]byte{0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x61, 'x'}, bytes.Repeat([]byte{0x81}, maxDepth-1)...), 0x01)
	if _, err := DecodeRequest(deep); err != nil {
		t.Errorf("nested %d deep: %v", maxDepth, err)
	}
}

// A message past MaxMessageSize is refused, in its canonical form too.
func TestCodecOverTheLimit(t *testing.T) {
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

// Marshal takes the ABI's messages only.
func TestMarshalRefusesOtherTypes(t *testing.T) {
	for _, v := range []any{nil, 1, "x", map[string]any{}, Tool{}, &Needs{}} {
		if b, err := Marshal(v); err == nil {
			t.Errorf("Marshal(%#v) = %x", v, b)
		}
	}
}

func trim(b []byte) []byte { return b[:min(len(b), 40)] }

// FuzzCodec holds the codec to the library: whatever bytes it reads as a
// message, the library reads as the same message; whatever message it
// writes, the library writes as the same bytes.
func FuzzCodec(f *testing.F) {
	for _, m := range messages()[:60] {
		if b, err := libEnc.Marshal(m); err == nil && len(b) < 4096 {
			f.Add(b, "t", 1)
		}
	}
	f.Add([]byte{0xa1, 0x63, 'a', 'b', 'i', 0x18, 0x01}, "", 24) // a non-minimal head
	f.Add([]byte{0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x63, 'a', 'b', 'i', 0x01}, "x", 2)
	f.Add([]byte{0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x61, 'x', 0x82, 0xf6, 0xa1, 0x00, 0x40}, "\xff", -3)
	types := []reflect.Type{reflect.TypeFor[Request](), reflect.TypeFor[Response](), reflect.TypeFor[Manifest](),
		reflect.TypeFor[HTTPRequest](), reflect.TypeFor[HTTPResponse]()}
	f.Fuzz(func(t *testing.T, b []byte, s string, v int) {
		for _, typ := range types {
			checkRead(t, typ, b)
		}
		if r, err := DecodeResponse(b); err == nil && !(validText(r.Output) && validText(r.Error)) {
			t.Fatalf("DecodeResponse read %x as text that is not UTF-8: %+v", b, r)
		}
		var body []byte
		if len(b) > 0 {
			body = b
		}
		for _, m := range []any{
			Request{ABI: v, Tool: s, CallID: s, Input: string(b), Workspace: s},
			Response{ABI: v, Output: string(b), Error: s},
			HTTPRequest{ABI: v, Method: s, URL: string(b), Body: body, Header: map[string][]string{s: {string(b)}, string(b): nil}},
			HTTPResponse{ABI: v, Status: v, Body: body, Error: s},
			Manifest{ABI: v, Tools: []Tool{{Name: s, Description: string(b), Needs: Needs{Env: []string{s}, Clock: v%2 == 0}}}},
		} {
			checkMessage(t, m)
		}
	})
}

func validText(s string) bool { return ValidText(s) == s }

// BenchmarkEnvelope is a call's envelopes through the codec and through
// the CBOR library (the baseline), in the same run: decoding a read_file
// request, and encoding and decoding its 3 KB response. In wasm, where
// the difference is larger, run it with
// `go test ./sandbox -run '^$' -bench EnvelopeInWasm`.
//
//	go test ./abi -run '^$' -bench Envelope
func BenchmarkEnvelope(b *testing.B) {
	req, _ := Marshal(Request{ABI: Version, Tool: "read_file", CallID: "call_1_0", Input: `{"path":"f.txt"}`, Workspace: WorkspaceDir})
	resp := Response{ABI: Version, Output: strings.Repeat("     1\ta line of text in the file\n", 90)}
	out, _ := Marshal(resp)
	ops := []struct {
		name           string
		codec, library func() error
	}{
		{"decode-request", func() error { _, err := DecodeRequest(req); return err },
			func() error { var r Request; return libDec.Unmarshal(req, &r) }},
		{"encode-response", func() error { _, err := Marshal(resp); return err },
			func() error { _, err := libEnc.Marshal(resp); return err }},
		{"decode-response", func() error { _, err := DecodeResponse(out); return err },
			func() error { var r Response; return libResp.Unmarshal(out, &r) }},
	}
	for _, op := range ops {
		for i, fn := range []func() error{op.codec, op.library} {
			b.Run(op.name+"/"+[]string{"codec", "library"}[i], func(b *testing.B) {
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
