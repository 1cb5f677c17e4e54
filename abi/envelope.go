package abi

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// Every call passes a Request to the guest and a Response back, and a
// guest pays for the reflection-driven CBOR library dearly: decoding a
// Request and encoding a Response took over 9 µs of a call in the
// sandbox, against 1 µs natively (BenchmarkEnvelope). So the two envelopes are written
// and read by hand here, on a fast path that knows only their canonical
// form: a definite-length map of text keys, each known and seen once, to
// text strings and an unsigned ABI version, with nothing after it. The
// encoder writes exactly the bytes the library's deterministic encoder
// writes; the decoder gives up on anything else (an unknown or repeated
// key, another type, invalid UTF-8, trailing bytes, a message past
// MaxMessageSize) and the library decodes it, so that what is accepted
// and refused is the library's.
// FuzzEnvelope holds both to it.

// encodeRequest is Marshal of r, or false when r needs the library.
func encodeRequest(r Request) ([]byte, bool) {
	if r.ABI < 0 {
		return nil, false
	}
	b := make([]byte, 0, 48+len(r.Tool)+len(r.CallID)+len(r.Input)+len(r.Workspace))
	b = appendHead(b, majorMap, 5)
	// Keys in the deterministic order: shorter first, then bytewise.
	b = appendUint(appendText(b, "abi"), r.ABI)
	b = appendText(appendText(b, "tool"), r.Tool)
	b = appendText(appendText(b, "input"), r.Input)
	b = appendText(appendText(b, "call_id"), r.CallID)
	b = appendText(appendText(b, "workspace"), r.Workspace)
	return b, true
}

// encodeResponse is Marshal of r, or false when r needs the library.
func encodeResponse(r Response) ([]byte, bool) {
	if r.ABI < 0 {
		return nil, false
	}
	b := make([]byte, 0, 32+len(r.Output)+len(r.Error))
	if r.Error == "" { // omitempty
		b = appendHead(b, majorMap, 2)
		b = appendUint(appendText(b, "abi"), r.ABI)
		return appendText(appendText(b, "output"), r.Output), true
	}
	b = appendHead(b, majorMap, 3)
	b = appendUint(appendText(b, "abi"), r.ABI)
	b = appendText(appendText(b, "error"), r.Error)
	return appendText(appendText(b, "output"), r.Output), true
}

// decodeRequest reads the canonical form of a Request, or reports false.
func decodeRequest(b []byte) (Request, bool) {
	var r Request
	d := openEnvelope(b)
	for d.more() {
		switch key := d.key(); string(key) {
		case "abi":
			d.read(1, d.uint(&r.ABI))
		case "tool":
			d.read(2, d.text(&r.Tool))
		case "call_id":
			d.read(4, d.text(&r.CallID))
		case "input":
			d.read(8, d.text(&r.Input))
		case "workspace":
			d.read(16, d.text(&r.Workspace))
		default:
			d.read(0, false)
		}
	}
	return r, d.done()
}

// decodeResponse reads the canonical form of a Response, or reports false.
func decodeResponse(b []byte) (Response, bool) {
	var r Response
	d := openEnvelope(b)
	for d.more() {
		switch key := d.key(); string(key) {
		case "abi":
			d.read(1, d.uint(&r.ABI))
		case "output":
			d.read(2, d.text(&r.Output))
		case "error":
			d.read(4, d.text(&r.Error))
		default:
			d.read(0, false)
		}
	}
	return r, d.done()
}

// CBOR major types (RFC 8949 §3.1) the envelopes use.
const (
	majorUint = 0
	majorText = 3
	majorMap  = 5
)

func appendHead(b []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(b, m|byte(n))
	case n <= math.MaxUint8:
		return append(b, m|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, m|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, m|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, m|27), n)
}

func appendText(b []byte, s string) []byte {
	return append(appendHead(b, majorText, uint64(len(s))), s...)
}

func appendUint(b []byte, n int) []byte { return appendHead(b, majorUint, uint64(n)) }

// envelopeReader reads an envelope's map off the front of b: its head,
// then each key and value, each key once.
type envelopeReader struct {
	b    []byte
	n    uint64 // entries left
	seen uint8  // the fields read, one bit each
	ok   bool
}

// openEnvelope starts reading b, a message within MaxMessageSize that is
// a map.
func openEnvelope(b []byte) *envelopeReader {
	d := &envelopeReader{b: b}
	if len(b) <= MaxMessageSize {
		d.n, d.ok = d.head(majorMap)
	}
	return d
}

// more tells whether an entry is left to read, and counts it read.
func (d *envelopeReader) more() bool {
	if !d.ok || d.n == 0 {
		return false
	}
	d.n--
	return true
}

// read records that the field of the given bit (0 for a key that names
// none) was read, or failed to be: a field read twice fails too.
func (d *envelopeReader) read(field uint8, ok bool) {
	d.ok = d.ok && ok && field != 0 && d.seen&field == 0
	d.seen |= field
}

// done tells whether the envelope was read whole, with nothing after it.
func (d *envelopeReader) done() bool { return d.ok && d.n == 0 && len(d.b) == 0 }

// head reads the head of an item of the given major type with a definite
// argument, and returns the argument.
func (d *envelopeReader) head(major byte) (uint64, bool) {
	if len(d.b) == 0 || d.b[0]>>5 != major {
		return 0, false
	}
	info := d.b[0] & 0x1f
	d.b = d.b[1:]
	if info < 24 {
		return uint64(info), true
	}
	size := 0
	switch info {
	case 24:
		size = 1
	case 25:
		size = 2
	case 26:
		size = 4
	case 27:
		size = 8
	default: // indefinite length or reserved
		return 0, false
	}
	if len(d.b) < size {
		return 0, false
	}
	var n uint64
	for _, c := range d.b[:size] {
		n = n<<8 | uint64(c)
	}
	d.b = d.b[size:]
	return n, true
}

func (d *envelopeReader) uint(v *int) bool {
	n, ok := d.head(majorUint)
	if !ok || n > math.MaxInt {
		return false
	}
	*v = int(n)
	return true
}

// key reads a text key in place, or returns nil (which names no field).
func (d *envelopeReader) key() []byte {
	n, ok := d.head(majorText)
	if !ok || n > uint64(len(d.b)) {
		return nil
	}
	k := d.b[:n]
	d.b = d.b[n:]
	return k
}

func (d *envelopeReader) text(v *string) bool {
	n, ok := d.head(majorText)
	if !ok || n > uint64(len(d.b)) || !utf8.Valid(d.b[:n]) {
		return false
	}
	*v, d.b = string(d.b[:n]), d.b[n:]
	return true
}
