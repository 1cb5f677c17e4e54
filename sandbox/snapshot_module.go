package sandbox

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
	secImport    = 2
	secGlobal    = 6
	secExport    = 7
	secData      = 11
	secDataCount = 12
)

// globalExportPrefix names the exports the rewrite adds for a reactor's
// mutable globals, followed by the global's index.
const globalExportPrefix = "cairn.global."

// reactor is a fast-mode module (see abi, "The fast mode") rewritten so
// that an instance can be snapshotted and restored: every mutable global
// is exported, so the host can read and set it, and every active data
// segment is emptied, so instantiating writes nothing into memory (the
// snapshot holds the data already). The segments' bytes are kept apart in
// data, which the host writes into the one instance it initialises.
type reactor struct {
	code    []byte    // the rewritten module: what is compiled
	globals []string  // export names of the mutable globals, in index order
	data    []dataRun // the active data segments, adjacent ones merged
}

// dataRun is bytes the data segments put at an offset of memory.
type dataRun struct {
	off uint64
	b   []byte
}

// errNotReactor is returned by newReactor for a module that is not in the
// fast mode; such a module runs as a command.
var errNotReactor = errors.New("not a fast-mode module")

// newReactor rewrites wasm if it is a fast-mode module: one that exports
// abi.InitExport and abi.CallExport and not _start.
//
// # Errors
//
// errNotReactor for a command module; an error naming what it could not
// rewrite for a malformed module or one whose globals or data segments
// are initialised by anything but constants.
func newReactor(wasm []byte) (*reactor, error) {
	m, err := readLayout(wasm)
	if err != nil {
		return nil, err
	}
	secs, exports, importedGlobals := m.secs, m.exports, m.importedGlobals
	if !exports[abi.InitExport] || !exports[abi.CallExport] || exports["_start"] {
		return nil, errNotReactor
	}
	r := &reactor{}
	mutable, err := mutableGlobals(secs[secGlobal])
	if err != nil {
		return nil, err
	}
	var extra []byte
	for _, i := range mutable {
		name := globalExportPrefix + strconv.Itoa(importedGlobals+i)
		if exports[name] {
			return nil, fmt.Errorf("the module already exports %q", name)
		}
		r.globals = append(r.globals, name)
		extra = appendName(extra, name)
		extra = append(extra, 0x03) // global
		extra = binary.AppendUvarint(extra, uint64(importedGlobals+i))
	}
	newExports, err := appendExports(secs[secExport], len(mutable), extra)
	if err != nil {
		return nil, err
	}
	newData, data, err := emptyDataSegments(secs[secData])
	if err != nil {
		return nil, err
	}
	if _, ok := secs[secDataCount]; !ok && newData != nil {
		// Without a data count section no instruction can name a data
		// segment, so the emptied ones can go: a Go module has tens of
		// thousands, which wazero would visit at every instantiation.
		newData = []byte{0}
	}
	r.data = data
	r.code = rebuild(wasm, map[byte][]byte{secExport: newExports, secData: newData})
	return r, nil
}

// sections returns the body of each known (non-custom) section by id.
func sections(wasm []byte) (map[byte][]byte, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], []byte("\x00asm")) {
		return nil, fmt.Errorf("%w: not a wasm binary", ErrInvalidModule)
	}
	out := map[byte][]byte{}
	for p := wasm[8:]; len(p) > 0; {
		id := p[0]
		size, n := binary.Uvarint(p[1:])
		if n <= 0 || uint64(len(p)-1-n) < size {
			return nil, fmt.Errorf("%w: truncated section %d", ErrInvalidModule, id)
		}
		if _, dup := out[id]; dup && id != 0 {
			return nil, fmt.Errorf("%w: section %d appears twice", ErrInvalidModule, id)
		}
		if id != 0 {
			out[id] = p[1+n : 1+n+int(size)]
		}
		p = p[1+n+int(size):]
	}
	return out, nil
}

// rebuild copies wasm with the bodies of the sections in replace swapped.
func rebuild(wasm []byte, replace map[byte][]byte) []byte {
	out := append([]byte(nil), wasm[:8]...)
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

// reader reads the encodings of the binary format, remembering the first
// error.
type reader struct {
	p   []byte
	err error
}

// count reads the length of a vector; an absent section is an empty one.
func (r *reader) count() uint64 {
	if len(r.p) == 0 {
		return 0
	}
	return r.uvarint()
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: malformed %s", ErrInvalidModule, what)
	}
	r.p = nil
}

func (r *reader) byte() byte {
	if len(r.p) == 0 {
		r.fail("byte")
		return 0
	}
	b := r.p[0]
	r.p = r.p[1:]
	return b
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.p)
	if n <= 0 {
		r.fail("integer")
		return 0
	}
	r.p = r.p[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if uint64(len(r.p)) < n {
		r.fail("bytes")
		return nil
	}
	b := r.p[:n]
	r.p = r.p[n:]
	return b
}

// sleb reads a signed LEB128 integer.
func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		b := r.byte()
		if r.err != nil {
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

func exportNames(sec []byte) (map[string]bool, error) {
	names := map[string]bool{}
	r := &reader{p: sec}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		names[string(r.bytes(r.uvarint()))] = true
		r.byte()
		r.uvarint()
	}
	return names, r.end("export section")
}

// end fails unless every byte was read: a section's contents must be
// exactly its vector.
func (r *reader) end(what string) error {
	if r.err == nil && len(r.p) != 0 {
		r.fail(what)
	}
	return r.err
}

func appendExports(sec []byte, added int, entries []byte) ([]byte, error) {
	r := &reader{p: sec}
	n := r.count()
	if r.err != nil {
		return nil, r.err
	}
	out := binary.AppendUvarint(nil, n+uint64(added))
	out = append(out, r.p...)
	return append(out, entries...), nil
}

func appendName(out []byte, name string) []byte {
	out = binary.AppendUvarint(out, uint64(len(name)))
	return append(out, name...)
}

// moduleLayout is what both rewrites of a module (newReactor and
// withStopChecks) read first.
type moduleLayout struct {
	secs             map[byte][]byte // section bodies by id
	exports          map[string]bool
	importedGlobals  int
	importedMemories int
}

func readLayout(wasm []byte) (*moduleLayout, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	m := &moduleLayout{secs: secs}
	if m.exports, err = exportNames(secs[secExport]); err != nil {
		return nil, err
	}
	if m.importedGlobals, m.importedMemories, err = countImports(secs[secImport]); err != nil {
		return nil, err
	}
	return m, nil
}

// countImports counts the globals and the memories an import section
// imports.
func countImports(sec []byte) (globals, memories int, err error) {
	r := &reader{p: sec}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		r.bytes(r.uvarint())
		r.bytes(r.uvarint())
		switch kind := r.byte(); kind {
		case 0x02:
			memories++
			r.importDesc(kind)
		case 0x03:
			globals++
			r.importDesc(kind)
		default:
			r.importDesc(kind)
		}
	}
	return globals, memories, r.end("import section")
}

// importDesc reads what an import of kind describes.
func (r *reader) importDesc(kind byte) {
	switch kind {
	case 0x00: // function: type index
		r.uvarint()
	case 0x01: // table: reftype, limits
		r.byte()
		r.limits()
	case 0x02: // memory: limits
		r.limits()
	case 0x03: // global: valtype, mutability
		r.byte()
		r.byte()
	default:
		r.fail("import")
	}
}

func (r *reader) limits() {
	flags := r.byte()
	r.uvarint()
	if flags&1 != 0 {
		r.uvarint()
	}
}

// mutableGlobals returns the indexes (among the module's own globals) of
// its mutable globals, checking every initialiser is a constant.
func mutableGlobals(sec []byte) ([]int, error) {
	r := &reader{p: sec}
	var out []int
	n := r.count()
	for i := 0; uint64(i) < n && r.err == nil; i++ {
		r.byte() // value type
		if r.byte() == 1 {
			out = append(out, i)
		}
		if _, err := r.constExpr(); err != nil {
			return nil, fmt.Errorf("global %d: %w", i, err)
		}
	}
	return out, r.err
}

// constExpr reads a constant expression; it returns the value of an
// i32.const, and an error for any expression but a single constant.
func (r *reader) constExpr() (int64, error) {
	var v int64
	switch op := r.byte(); op {
	case 0x41, 0x42: // i32.const, i64.const
		v = r.sleb()
	case 0x43: // f32.const
		r.bytes(4)
	case 0x44: // f64.const
		r.bytes(8)
	default:
		return 0, fmt.Errorf("initialiser opcode 0x%02x is not a constant", op)
	}
	if r.byte() != 0x0b {
		return 0, errors.New("initialiser is not a single constant")
	}
	return v, r.err
}

// emptyDataSegments replaces every active data segment by an empty
// passive one (which, like an active segment after instantiation, holds
// nothing) and returns what the active segments put in memory.
func emptyDataSegments(sec []byte) ([]byte, []dataRun, error) {
	if sec == nil {
		return nil, nil, nil
	}
	r := &reader{p: sec}
	n := r.count()
	out := binary.AppendUvarint(nil, n)
	var runs []dataRun
	for i := uint64(0); i < n && r.err == nil; i++ {
		start := r.p
		flags := r.uvarint()
		if flags == 1 { // passive: kept
			r.bytes(r.uvarint())
			out = append(out, start[:len(start)-len(r.p)]...)
			continue
		}
		if flags == 2 && r.uvarint() != 0 {
			return nil, nil, fmt.Errorf("data segment %d: not in memory 0", i)
		}
		if flags > 2 {
			return nil, nil, fmt.Errorf("data segment %d: unknown kind %d", i, flags)
		}
		if len(r.p) == 0 || r.p[0] != 0x41 {
			return nil, nil, fmt.Errorf("data segment %d: offset is not an i32 constant", i)
		}
		off, err := r.constExpr()
		if err != nil {
			return nil, nil, fmt.Errorf("data segment %d: %w", i, err)
		}
		b := r.bytes(r.uvarint())
		if k := len(runs) - 1; k >= 0 && runs[k].off+uint64(len(runs[k].b)) == uint64(uint32(off)) {
			runs[k].b = append(runs[k].b, b...)
		} else if len(b) > 0 {
			runs = append(runs, dataRun{uint64(uint32(off)), append([]byte(nil), b...)})
		}
		out = append(out, 0x01, 0x00)
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	return out, runs, nil
}
