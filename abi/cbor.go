package abi

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// The ABI's messages are written and read by hand, in the subset of CBOR
// (RFC 8949) they use: maps of text keys to text and byte strings,
// integers, booleans, arrays and maps. A guest links this package, and a
// general CBOR library, which works by reflection, made a Go tool's module
// 1.4 MB larger (its first call's compile 1.4 to 1.6 times as long) and
// its messages 1.4 to 1.8 times slower to read and write in the sandbox
// (BENCHMARKS.md, "A Go tool without a CBOR library").
//
// The writer writes what RFC 8949's core deterministic encoding writes:
// the shortest heads, definite lengths, map keys in bytewise order of their
// encoding. The reader takes any encoding of those types and is hardened
// as every decoder of untrusted bytes in cairn is (see RATIONALE.md, "CBOR,
// and how it is decoded"): a message within MaxMessageSize, nesting within
// maxDepth, arrays and maps within maxElements, no indefinite lengths, no
// duplicate map keys, text that is UTF-8, nothing after the message. It
// ignores a key it does not know, so a newer minor field never breaks an
// older reader; it refuses tags, and a key that differs from a known one
// only in case. FuzzCodec holds both to a general CBOR library's reading
// and writing.

// CBOR major types (RFC 8949 §3.1).
const (
	majorUint   = 0
	majorNeg    = 1
	majorBytes  = 2
	majorText   = 3
	majorArray  = 4
	majorMap    = 5
	majorTag    = 6
	majorSimple = 7
)

// The simple values the messages use.
const (
	cborFalse     = 0xf4
	cborTrue      = 0xf5
	cborNull      = 0xf6
	cborUndefined = 0xf7
)

// The reader's bounds: the nesting of arrays and maps, and the elements of
// one array or pairs of one map.
const (
	maxDepth    = 16
	maxElements = 1 << 16
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

func appendBytes(b, p []byte) []byte {
	return append(appendHead(b, majorBytes, uint64(len(p))), p...)
}

func appendInt(b []byte, n int) []byte {
	if n < 0 {
		return appendHead(b, majorNeg, uint64(-1-n))
	}
	return appendHead(b, majorUint, uint64(n))
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, cborTrue)
	}
	return append(b, cborFalse)
}

// appendStrings writes ss as an array of text, or null for a nil slice.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, cborNull)
	}
	b = appendHead(b, majorArray, uint64(len(ss)))
	for _, s := range ss {
		b = appendText(b, s)
	}
	return b
}

// appendHeader writes h as a map in the deterministic order of its keys:
// shorter first, then bytewise.
func appendHeader(b []byte, h map[string][]string) []byte {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y string) int {
		if len(x) != len(y) {
			return len(x) - len(y)
		}
		return strings.Compare(x, y)
	})
	b = appendHead(b, majorMap, uint64(len(keys)))
	for _, k := range keys {
		b = appendStrings(appendText(b, k), h[k])
	}
	return b
}

// decoder reads one message. Its first error sticks: every read after it
// does nothing, so a message's reader checks once, at the end.
type decoder struct {
	b     []byte
	size  int // of the whole message, to say where an error is
	depth int
	// loose takes text that is not UTF-8, and byte strings, for text: a
	// Response's strings are whatever a tool wrote, and an HTTPResponse's
	// what a host passed on of a server's answer.
	loose bool
	err   error
}

// reading starts reading b, one message of at most limit bytes.
func reading(b []byte, limit int, loose bool) decoder {
	d := decoder{b: b, size: len(b), loose: loose}
	switch {
	case len(b) > limit:
		d.err = fmt.Errorf("message is %d bytes, limit %d", len(b), limit)
	case len(b) == 0:
		d.err = fmt.Errorf("empty message")
	}
	return d
}

// end is the first error reading the message met, or that it was not the
// whole of the bytes.
func (d *decoder) end() error {
	if d.err == nil && len(d.b) > 0 {
		d.failf("%d bytes after the message", len(d.b))
	}
	return d.err
}

func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("cbor at byte %d: %s", d.size-len(d.b), fmt.Sprintf(format, args...))
	}
}

// head reads the head of the next item: its major type, its additional
// information and its argument (a length, a number, a simple value, or a
// float's bits). After an error it returns a major type of none.
func (d *decoder) head() (major, info byte, arg uint64) {
	if d.err == nil && len(d.b) > 0 && d.b[0]&0x1f < 24 { // a head of one byte
		c := d.b[0]
		d.b = d.b[1:]
		return c >> 5, c & 0x1f, uint64(c & 0x1f)
	}
	return d.longHead()
}

// longHead is head for a head of more than one byte, or none.
func (d *decoder) longHead() (major, info byte, arg uint64) {
	const none = 0xff
	if d.err != nil {
		return none, 0, 0
	}
	if len(d.b) == 0 {
		d.failf("the message ends inside an item")
		return none, 0, 0
	}
	major, info = d.b[0]>>5, d.b[0]&0x1f
	d.b = d.b[1:]
	switch {
	case info < 24:
		return major, info, uint64(info)
	case info <= 27:
		size := 1 << (info - 24)
		if len(d.b) < size {
			d.failf("the message ends inside a head")
			return none, 0, 0
		}
		for _, c := range d.b[:size] {
			arg = arg<<8 | uint64(c)
		}
		d.b = d.b[size:]
		if major == majorSimple && info == 24 && arg < 32 {
			d.failf("a simple value of two bytes below 32")
			return none, 0, 0
		}
		return major, info, arg
	case info == 31:
		d.failf("an indefinite length or a break, which the ABI does not use")
	default:
		d.failf("reserved additional information %d", info)
	}
	return none, 0, 0
}

// null reads a null or undefined, which every type reads as its zero
// value, and reports whether there was one.
func (d *decoder) null() bool {
	if d.err == nil && len(d.b) > 0 && (d.b[0] == cborNull || d.b[0] == cborUndefined) {
		d.b = d.b[1:]
		return true
	}
	return false
}

// wrong fails for an item of the given major type where want was due.
func (d *decoder) wrong(major byte, want string) {
	names := [...]string{"an unsigned integer", "a negative integer", "a byte string", "a text string", "an array", "a map", "a tag", "a simple value or float"}
	if int(major) < len(names) {
		d.failf("want %s, found %s", want, names[major])
	}
}

// span reads n bytes of a string's content.
func (d *decoder) span(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.failf("a string of %d bytes runs past the message", n)
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

// textBytes reads a text string in place (or a byte string, when loose
// and not a key).
func (d *decoder) textBytes(key bool) []byte {
	major, _, n := d.head()
	if major != majorText && (major != majorBytes || !d.loose || key) {
		d.wrong(major, "a text string")
		return nil
	}
	s := d.span(n)
	if major == majorText && !d.loose && !utf8.Valid(s) {
		d.failf("a text string that is not UTF-8")
	}
	return s
}

func (d *decoder) text(v *string) {
	if d.null() {
		*v = ""
		return
	}
	if s := d.textBytes(false); d.err == nil {
		*v = string(s)
	}
}

func (d *decoder) bytes(v *[]byte) {
	if d.null() {
		*v = nil
		return
	}
	major, _, n := d.head()
	if major != majorBytes {
		d.wrong(major, "a byte string")
		return
	}
	if s := d.span(n); d.err == nil {
		*v = append([]byte{}, s...)
	}
}

func (d *decoder) integer(v *int) {
	if d.null() {
		*v = 0
		return
	}
	major, _, n := d.head()
	switch {
	case major != majorUint && major != majorNeg:
		d.wrong(major, "an integer")
	case n > math.MaxInt:
		d.failf("an integer past the range of an int")
	case major == majorUint:
		*v = int(n)
	default:
		*v = -1 - int(n)
	}
}

func (d *decoder) boolean(v *bool) {
	if d.null() {
		*v = false
		return
	}
	major, info, _ := d.head()
	switch {
	case major == majorSimple && info == cborFalse&0x1f:
		*v = false
	case major == majorSimple && info == cborTrue&0x1f:
		*v = true
	default:
		d.wrong(major, "a boolean")
	}
}

// array reads an array's head and returns its length; the caller reads
// that many items, then calls leave.
func (d *decoder) array() int {
	major, _, n := d.head()
	if major != majorArray {
		d.wrong(major, "an array")
		return 0
	}
	return d.enter(n, 1)
}

// enter counts a level of nesting of n items of at least per bytes each,
// and returns n, or 0 after an error.
func (d *decoder) enter(n uint64, per uint64) int {
	switch {
	case d.err != nil:
		return 0
	case d.depth == maxDepth:
		d.failf("nested deeper than %d", maxDepth)
		return 0
	case n > maxElements:
		d.failf("%d elements, limit %d", n, maxElements)
		return 0
	case n*per > uint64(len(d.b)):
		d.failf("%d elements run past the message", n)
		return 0
	}
	d.depth++
	return int(n)
}

func (d *decoder) leave() { d.depth-- }

func (d *decoder) strings(v *[]string) {
	if d.null() {
		*v = nil
		return
	}
	n := d.array()
	if d.err != nil {
		return
	}
	ss := make([]string, n)
	for i := range ss {
		d.text(&ss[i])
	}
	d.leave()
	*v = ss
}

func (d *decoder) header(v *map[string][]string) {
	if d.null() {
		*v = nil
		return
	}
	major, _, n := d.head()
	if major != majorMap {
		d.wrong(major, "a map")
		return
	}
	pairs := d.enter(n, 2)
	if d.err != nil {
		return
	}
	h := make(map[string][]string, pairs)
	for range pairs {
		key := d.textBytes(true)
		if _, dup := h[string(key)]; dup && d.err == nil {
			d.failf("the key %q twice", key)
		}
		var vs []string
		d.strings(&vs)
		if d.err != nil {
			return
		}
		h[string(key)] = vs
	}
	d.leave()
	*v = h
}

// object reads a map whose keys name the fields of a struct:
//
//	o := d.object(keys)
//	for d.field(&o) {
//		switch o.key { ... read keys[o.key]'s value ... }
//	}
//
// A null reads as a map with no keys.
type object struct {
	keys  []string
	left  int    // pairs not read
	seen  uint32 // the known keys read, one bit each
	other map[string]bool
	key   int // the known key of the pair being read
	open  bool
}

func (d *decoder) object(keys []string) object {
	o := object{keys: keys}
	if d.null() {
		return o
	}
	major, _, n := d.head()
	if major != majorMap {
		d.wrong(major, "a map")
		return o
	}
	o.left = d.enter(n, 2)
	o.open = d.err == nil
	return o
}

// field reads the next pair up to its value, skipping those whose key is
// not known, and reports whether there is one to read.
func (d *decoder) field(o *object) bool {
	for d.err == nil && o.left > 0 {
		o.left--
		key := d.textBytes(true)
		if d.err != nil {
			return false
		}
		if i := index(o.keys, key); i >= 0 {
			if o.seen&(1<<i) != 0 {
				d.failf("the key %q twice", key)
				return false
			}
			o.seen |= 1 << i
			o.key = i
			return true
		}
		for _, k := range o.keys {
			if strings.EqualFold(k, string(key)) {
				d.failf("the key %q, which is %q in another case", key, k)
				return false
			}
		}
		if o.other[string(key)] {
			d.failf("the key %q twice", key)
			return false
		}
		if o.other == nil {
			o.other = map[string]bool{}
		}
		o.other[string(key)] = true
		d.skip()
	}
	if o.open && d.err == nil {
		d.leave()
		o.open = false
	}
	return false
}

// index is the position of key in keys, or -1.
func index(keys []string, key []byte) int {
	for i, k := range keys {
		if k == string(key) {
			return i
		}
	}
	return -1
}

// skip reads one item of any type the reader takes, and drops it.
func (d *decoder) skip() {
	major, _, n := d.head()
	switch major {
	case majorUint, majorNeg, majorSimple:
	case majorBytes:
		d.span(n)
	case majorText:
		s := d.span(n)
		if !d.loose && !utf8.Valid(s) {
			d.failf("a text string that is not UTF-8")
		}
	case majorArray:
		for range d.enter(n, 1) {
			d.skip()
		}
		d.leaveIfOK()
	case majorMap:
		pairs := d.enter(n, 2)
		var keys map[string]bool
		for range pairs {
			start := d.b
			d.skip()
			key := string(start[:len(start)-len(d.b)])
			if keys[key] && d.err == nil {
				d.failf("a key twice in a map")
			}
			if keys == nil {
				keys = map[string]bool{}
			}
			keys[key] = true
			d.skip()
		}
		d.leaveIfOK()
	case majorTag:
		d.failf("a tag, which the ABI does not use")
	}
}

func (d *decoder) leaveIfOK() {
	if d.err == nil {
		d.leave()
	}
}
