package wasmcode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/cairnrun/cairn/abi"
)

// Section ids of the WebAssembly binary format.
const (
	SecImport    = 2
	SecGlobal    = 6
	SecExport    = 7
	SecData      = 11
	SecDataCount = 12
)

// GlobalExportPrefix names the exports the rewrite adds for a Reactor's
// mutable globals, followed by the global's index.
const GlobalExportPrefix = "cairn.global."

// Reactor is a fast-mode module (see abi, "The fast mode") rewritten so
// that an instance can be snapshotted and restored: every mutable global
// is exported, so the host can read and set it, and every active data
// segment is emptied, so instantiating writes nothing into memory (the
// snapshot holds the data already). The segments' bytes are kept apart in
// data, which the host writes into the one instance it initialises.
type Reactor struct {
	Code    []byte    // the rewritten module: what is compiled
	Globals []string  // export names of the mutable globals, in index order
	Data    []DataRun // the active data segments, adjacent ones merged
}

// DataRun is bytes the data segments put at an offset of memory.
type DataRun struct {
	Off uint64
	B   []byte
}

// ErrNotReactor is returned by NewReactor for a module that is not in the
// fast mode; such a module runs as a command.
var ErrNotReactor = errors.New("not a fast-mode module")

// NewReactor rewrites wasm if it is a fast-mode module: one that exports
// abi.InitExport and abi.CallExport and not _start.
//
// # Errors
//
// ErrNotReactor for a command module; an error naming what it could not
// rewrite for a malformed module or one whose globals or data segments
// are initialised by anything but constants.
func NewReactor(wasm []byte) (*Reactor, error) {
	m, err := readLayout(wasm)
	if err != nil {
		return nil, err
	}
	secs, exports, importedGlobals := m.secs, m.exports, m.importedGlobals
	if !exports[abi.InitExport] || !exports[abi.CallExport] || exports["_start"] {
		return nil, ErrNotReactor
	}
	r := &Reactor{}
	mutable, err := mutableGlobals(secs[SecGlobal])
	if err != nil {
		return nil, err
	}
	var extra []byte
	for _, i := range mutable {
		name := GlobalExportPrefix + strconv.Itoa(importedGlobals+i)
		if exports[name] {
			return nil, fmt.Errorf("the module already exports %q", name)
		}
		r.Globals = append(r.Globals, name)
		extra = appendName(extra, name)
		extra = append(extra, 0x03) // global
		extra = binary.AppendUvarint(extra, uint64(importedGlobals+i))
	}
	newExports, err := appendExports(secs[SecExport], len(mutable), extra)
	if err != nil {
		return nil, err
	}
	newData, data, err := EmptyDataSegments(secs[SecData])
	if err != nil {
		return nil, err
	}
	if _, ok := secs[SecDataCount]; !ok && newData != nil {
		// Without a data count section no instruction can name a data
		// segment, so the emptied ones can go: a Go module has tens of
		// thousands, which wazero would visit at every instantiation.
		newData = []byte{0}
	}
	r.Data = data
	r.Code = Rebuild(wasm, map[byte][]byte{SecExport: newExports, SecData: newData})
	return r, nil
}

// sections returns the body of each known (non-custom) section by id.
func Sections(wasm []byte) (map[byte][]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, fmt.Errorf("%w: not a wasm binary", ErrInvalid)
	}
	out := map[byte][]byte{}
	last := 0 // where the last known section goes
	for p := wasm[8:]; len(p) > 0; {
		id := p[0]
		size, n := binary.Uvarint(p[1:])
		if n <= 0 || uint64(len(p)-1-n) < size {
			return nil, fmt.Errorf("%w: truncated section %d", ErrInvalid, id)
		}
		if _, dup := out[id]; dup && id != 0 {
			return nil, fmt.Errorf("%w: section %d appears twice", ErrInvalid, id)
		}
		if id != 0 {
			// The rewrites put each section they add or replace where
			// the format says it goes: a module out of that order would
			// come out with a section twice.
			at, known := sectionOrder[id]
			switch {
			case !known:
				return nil, fmt.Errorf("%w: unknown section %d", ErrInvalid, id)
			case at < last:
				return nil, fmt.Errorf("%w: section %d is out of order", ErrInvalid, id)
			}
			last = at
			out[id] = p[1+n : 1+n+int(size)]
		}
		p = p[1+n+int(size):]
	}
	return out, nil
}

// rebuild copies wasm with the bodies of the sections in replace swapped.
func Rebuild(wasm []byte, replace map[byte][]byte) []byte {
	out := append(make([]byte, 0, rebuiltSize(wasm, replace)), wasm[:8]...)
	for p := wasm[8:]; len(p) > 0; {
		id := p[0]
		size, n := binary.Uvarint(p[1:])
		body := p[1+n : 1+n+int(size)]
		if r, ok := replace[id]; ok && id != 0 {
			body = r
		}
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
		p = p[1+n+int(size):]
	}
	return out
}

// rebuiltSize bounds the size of wasm with its sections replaced, so that
// a rebuild allocates its output once: a module's megabytes copied into a
// buffer grown by doubling would allocate about twice as much again. The
// sections replaced are not counted, so that the bound is not the size of
// the module's code twice over.
func rebuiltSize(wasm []byte, replace map[byte][]byte) int {
	n := len(wasm)
	for p := wasm[8:]; len(p) > 0; {
		size, k := binary.Uvarint(p[1:])
		if _, ok := replace[p[0]]; ok && p[0] != 0 {
			n -= 1 + k + int(size)
		}
		p = p[1+k+int(size):]
	}
	for _, body := range replace {
		n += len(body) + binary.MaxVarintLen64 + 1
	}
	return n
}

// Reader reads the encodings of the binary format, remembering the first
// error.
type Reader struct {
	P   []byte
	Err error
}

// count reads the length of a vector; an absent section is an empty one.
func (r *Reader) Count() uint64 {
	if len(r.P) == 0 {
		return 0
	}
	return r.Uvarint()
}

func (r *Reader) fail(what string) {
	if r.Err == nil {
		r.Err = fmt.Errorf("%w: malformed %s", ErrInvalid, what)
	}
	r.P = nil
}

func (r *Reader) Byte() byte {
	if len(r.P) == 0 {
		r.fail("byte")
		return 0
	}
	b := r.P[0]
	r.P = r.P[1:]
	return b
}

func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.P)
	if n <= 0 {
		r.fail("integer")
		return 0
	}
	r.P = r.P[n:]
	return v
}

func (r *Reader) Bytes(n uint64) []byte {
	if uint64(len(r.P)) < n {
		r.fail("bytes")
		return nil
	}
	b := r.P[:n]
	r.P = r.P[n:]
	return b
}

// sleb reads a signed LEB128 integer.
func (r *Reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		b := r.Byte()
		if r.Err != nil {
			return 0
		}
		v |= int64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
		if shift >= 70 {
			r.fail("integer")
			return 0
		}
	}
}

// ExportKinds reads an export section: the kind of each export by name
// (0 a function, 1 a table, 2 a memory, 3 a global).
func ExportKinds(sec []byte) (map[string]byte, error) {
	kinds := map[string]byte{}
	r := &Reader{P: sec}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		name := string(r.Bytes(r.Uvarint()))
		kinds[name] = r.Byte()
		r.Uvarint()
	}
	return kinds, r.end("export section")
}

func ExportNames(sec []byte) (map[string]bool, error) {
	names := map[string]bool{}
	r := &Reader{P: sec}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		names[string(r.Bytes(r.Uvarint()))] = true
		r.Byte()
		r.Uvarint()
	}
	return names, r.end("export section")
}

// end fails unless every byte was read: a section's contents must be
// exactly its vector.
func (r *Reader) end(what string) error {
	if r.Err == nil && len(r.P) != 0 {
		r.fail(what)
	}
	return r.Err
}

func appendExports(sec []byte, added int, entries []byte) ([]byte, error) {
	r := &Reader{P: sec}
	n := r.Count()
	if r.Err != nil {
		return nil, r.Err
	}
	out := binary.AppendUvarint(nil, n+uint64(added))
	out = append(out, r.P...)
	return append(out, entries...), nil
}

func appendName(out []byte, name string) []byte {
	out = binary.AppendUvarint(out, uint64(len(name)))
	return append(out, name...)
}

// moduleLayout is what both rewrites of a module (NewReactor and
// WithStopChecks) read first.
type moduleLayout struct {
	secs             map[byte][]byte // section bodies by id
	exports          map[string]bool
	importedGlobals  int
	importedMemories int
}

func readLayout(wasm []byte) (*moduleLayout, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, err
	}
	m := &moduleLayout{secs: secs}
	if m.exports, err = ExportNames(secs[SecExport]); err != nil {
		return nil, err
	}
	if m.importedGlobals, m.importedMemories, err = countImports(secs[SecImport]); err != nil {
		return nil, err
	}
	return m, nil
}

// countImports counts the globals and the memories an import section
// imports.
func countImports(sec []byte) (globals, memories int, err error) {
	r := &Reader{P: sec}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		r.Bytes(r.Uvarint())
		r.Bytes(r.Uvarint())
		switch kind := r.Byte(); kind {
		case 0x02:
			memories++
			r.ImportDesc(kind)
		case 0x03:
			globals++
			r.ImportDesc(kind)
		default:
			r.ImportDesc(kind)
		}
	}
	return globals, memories, r.end("import section")
}

// importDesc reads what an import of kind describes.
func (r *Reader) ImportDesc(kind byte) {
	switch kind {
	case 0x00: // function: type index
		r.Uvarint()
	case 0x01: // table: reftype, limits
		r.Byte()
		r.limits()
	case 0x02: // memory: limits
		r.limits()
	case 0x03: // global: valtype, mutability
		r.Byte()
		r.Byte()
	default:
		r.fail("import")
	}
}

func (r *Reader) limits() {
	flags := r.Byte()
	r.Uvarint()
	if flags&1 != 0 {
		r.Uvarint()
	}
}

// mutableGlobals returns the indexes (among the module's own globals) of
// its mutable globals, checking every initialiser is a constant.
func mutableGlobals(sec []byte) ([]int, error) {
	r := &Reader{P: sec}
	var out []int
	n := r.Count()
	for i := 0; uint64(i) < n && r.Err == nil; i++ {
		r.Byte() // value type
		if r.Byte() == 1 {
			out = append(out, i)
		}
		if _, err := r.constExpr(); err != nil {
			return nil, fmt.Errorf("global %d: %w", i, err)
		}
	}
	return out, r.Err
}

// constExpr reads a constant expression; it returns the value of an
// i32.const, and an error for any expression but a single constant.
func (r *Reader) constExpr() (int64, error) {
	var v int64
	switch op := r.Byte(); op {
	case 0x41, 0x42: // i32.const, i64.const
		v = r.sleb()
	case 0x43: // f32.const
		r.Bytes(4)
	case 0x44: // f64.const
		r.Bytes(8)
	default:
		return 0, fmt.Errorf("initialiser opcode 0x%02x is not a constant", op)
	}
	if r.Byte() != 0x0b {
		return 0, errors.New("initialiser is not a single constant")
	}
	return v, r.Err
}

// EmptyDataSegments replaces every active data segment by an empty
// passive one (which, like an active segment after instantiation, holds
// nothing) and returns what the active segments put in memory. A Go
// module has tens of thousands of segments: their bytes are counted
// first and copied into one new slice, which the runs share.
func EmptyDataSegments(sec []byte) ([]byte, []DataRun, error) {
	if sec == nil {
		return nil, nil, nil
	}
	var segs, nbytes, nout int
	err := eachSegment(sec, func(raw []byte, active bool, _ uint64, b []byte) {
		if !active {
			nout += len(raw)
			return
		}
		nout += 2
		if len(b) > 0 {
			segs, nbytes = segs+1, nbytes+len(b)
		}
	})
	if err != nil {
		return nil, nil, err
	}
	out := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+nout), segmentCount(sec))
	runs := make([]DataRun, 0, segs)
	all := make([]byte, 0, nbytes)
	eachSegment(sec, func(raw []byte, active bool, off uint64, b []byte) {
		if !active {
			out = append(out, raw...)
			return
		}
		out = append(out, 0x01, 0x00)
		if k := len(runs) - 1; k >= 0 && runs[k].Off+uint64(len(runs[k].B)) == off {
			start := len(all) - len(runs[k].B)
			all = append(all, b...)
			runs[k].B = all[start:len(all):len(all)]
		} else if len(b) > 0 {
			all = append(all, b...)
			runs = append(runs, DataRun{Off: off, B: all[len(all)-len(b) : len(all) : len(all)]})
		}
	})
	return out, runs, nil
}

// segmentCount is the number of segments of a data section.
func segmentCount(sec []byte) uint64 {
	r := &Reader{P: sec}
	return r.Count()
}

// eachSegment reads a data section, calling fn with each segment's
// encoding (raw) and, for an active one, the memory offset its bytes go
// to. It refuses an active segment of another memory or whose offset is
// not an i32 constant.
func eachSegment(sec []byte, fn func(raw []byte, active bool, off uint64, b []byte)) error {
	r := &Reader{P: sec}
	n := r.Count()
	for i := uint64(0); i < n && r.Err == nil; i++ {
		start := r.P
		flags := r.Uvarint()
		if flags == 1 { // passive: kept
			r.Bytes(r.Uvarint())
			fn(start[:len(start)-len(r.P)], false, 0, nil)
			continue
		}
		if flags == 2 && r.Uvarint() != 0 {
			return fmt.Errorf("data segment %d: not in memory 0", i)
		}
		if flags > 2 {
			return fmt.Errorf("data segment %d: unknown kind %d", i, flags)
		}
		if len(r.P) == 0 || r.P[0] != 0x41 {
			return fmt.Errorf("data segment %d: offset is not an i32 constant", i)
		}
		off, err := r.constExpr()
		if err != nil {
			return fmt.Errorf("data segment %d: %w", i, err)
		}
		b := r.Bytes(r.Uvarint())
		if r.Err == nil {
			fn(start[:len(start)-len(r.P)], true, uint64(uint32(off)), b)
		}
	}
	return r.Err
}
