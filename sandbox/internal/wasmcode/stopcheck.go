package wasmcode

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Section ids the stop-check rewrite touches, besides those in
// snapshot_module.go.
const (
	SecType     = 1
	SecFunction = 3
	SecMemory   = 5
	SecStart    = 8
	SecCode     = 10
)

// The rewrite's exports: StopExport is a global that is 0 while the
// guest may run and 1 once it must stop, FuelExport the checks left before
// the next stop to look at it, and StartExport the module's start
// function.
const (
	StopExport  = "cairn.stop"
	FuelExport  = "cairn.fuel"
	StartExport = "cairn.start"
)

// FuelPerYield is how many checks a guest passes between two looks at its
// stop global, each with an exit into Go: a Go guest passes two per call
// of a function, so this is some hundreds of microseconds of work.
const FuelPerYield = 8192

// LoopTurnsPerCheck is how many times a loop goes round between two of its
// checks: the turns between are counted in a local of the function, which
// the compiler keeps in a register, where the check reads and writes the
// fuel global in memory. A tight loop then pays a decrement and a branch a
// turn, not a load and a store that the next turn waits on.
const LoopTurnsPerCheck = 64

// StopChecked is a module rewritten so that the host can stop it from
// another goroutine (see WithStopChecks).
type StopChecked struct {
	Code  []byte
	Start bool // the module had a start function, now exported as StartExport
}

// WithStopChecks rewrites a module so that the host can stop it by
// setting a global. It adds two mutable i32 globals, stop and fuel, and at
// the entry of every function (but one that runs straight into a loop)
// the check
//
//	fuel = fuel - 1
//	if fuel == 0 {
//		fuel = FuelPerYield
//		if stop { unreachable }
//		memory.grow(0)
//	}
//
// It adds an i32 local, turns, to every function, and at the head of every
// loop
//
//	if turns != 0 {
//		turns = turns - 1
//	} else {
//		check
//		turns = LoopTurnsPerCheck - 1
//	}
//
// so a loop passes the check the first time round in each call of its
// function (turns starts at 0) and every LoopTurnsPerCheck times after.
// Nothing runs long without passing a check, since code that neither loops
// nor calls ends within its own length. The host stops a guest by setting
// stop and fuel to 1, and the guest traps at its next check, at most
// LoopTurnsPerCheck turns of a loop later. memory.grow,
// which changes nothing here, is there because wazero runs it in Go: the
// Go runtime can stop a goroutine for its garbage collector, or to run
// another one, only in Go code, never in a guest's, so a guest that never
// left its own code would hold up every goroutine of the process at the
// next collection, the one that would stop it included. This is what
// wazero's WithCloseOnContextDone provides, for a fraction of its cost: its
// check, at loop heads only, goes into Go every time (RATIONALE.md,
// "Stopping a guest"). Checking at function entry also stops a guest that
// recurses without looping; a function whose entry runs straight into a
// loop is checked there only (see runsIntoLoop).
//
// A start function would run during instantiation, before the host can
// arm the stop; the rewrite exports it as StartExport instead, for the
// host to call once armed.
//
// The guest cannot reach the globals or the local: the rewrite refuses a
// module whose code names a global it does not define, or a local its
// function does not declare, and the new ones come after the last.
//
// # Errors
//
// An error naming what it could not read or does not support (an
// instruction of a proposal the sandbox does not enable, a module without
// memory); such a module is stopped by wazero's mechanism instead.
func WithStopChecks(wasm []byte) (*StopChecked, error) {
	m, err := readLayout(wasm)
	if err != nil {
		return nil, err
	}
	secs := m.secs
	for _, name := range []string{StopExport, FuelExport, StartExport} {
		if m.exports[name] {
			return nil, fmt.Errorf("the module already exports %s", name)
		}
	}
	memories, err := (&Reader{P: secs[SecMemory]}).countOnly()
	if err != nil {
		return nil, err
	}
	if memories == 0 && m.importedMemories == 0 {
		return nil, fmt.Errorf("a module without memory has nothing to step into Go with")
	}
	own, err := (&Reader{P: secs[SecGlobal]}).countOnly()
	if err != nil {
		return nil, err
	}
	stop := uint64(m.importedGlobals) + own
	params, err := paramCounts(secs[SecType], secs[SecFunction])
	if err != nil {
		return nil, err
	}
	code, err := checkCode(secs[SecCode], stop, params)
	if err != nil {
		return nil, err
	}
	globals := binary.AppendUvarint(nil, own+2)
	if own > 0 {
		r := &Reader{P: secs[SecGlobal]}
		r.Uvarint()
		globals = append(globals, r.P...)
	}
	globals = append(globals, 0x7f, 0x01, 0x41, 0x00, 0x0b) // stop: (mut i32) (i32.const 0)
	globals = append(globals, 0x7f, 0x01, 0x41)             // fuel: (mut i32) (i32.const FuelPerYield)
	globals = appendSLEB(globals, FuelPerYield)
	globals = append(globals, 0x0b)

	var entries []byte
	for i, name := range []string{StopExport, FuelExport} {
		entries = appendName(entries, name)
		entries = append(entries, 0x03)
		entries = binary.AppendUvarint(entries, stop+uint64(i))
	}
	added := 2
	out := &StopChecked{}
	replace := map[byte][]byte{SecGlobal: globals, SecCode: code}
	if start, ok := secs[SecStart]; ok {
		r := &Reader{P: start}
		fn := r.Uvarint()
		if r.Err != nil || len(r.P) != 0 {
			return nil, fmt.Errorf("%w: malformed start section", ErrInvalid)
		}
		entries = appendName(entries, StartExport)
		entries = append(entries, 0x00)
		entries = binary.AppendUvarint(entries, fn)
		added++
		replace[SecStart] = nil
		out.Start = true
	}
	if replace[SecExport], err = appendExports(secs[SecExport], added, entries); err != nil {
		return nil, err
	}
	out.Code = rebuildSections(wasm, replace)
	return out, nil
}

// countOnly reads the length of a vector.
func (r *Reader) countOnly() (uint64, error) {
	n := r.Count()
	return n, r.Err
}

// sectionOrder is where each known section goes in a module.
var sectionOrder = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 12: 10, 10: 11, 11: 12}

// rebuildSections copies wasm with the sections in replace swapped in,
// added where the module has none, and removed where replace holds nil.
// Custom sections of DWARF are dropped: they locate code by offsets the
// rewrite moves.
func rebuildSections(wasm []byte, replace map[byte][]byte) []byte {
	out := append(make([]byte, 0, rebuiltSize(wasm, replace)), wasm[:8]...)
	done := map[byte]bool{}
	appendSec := func(id byte, body []byte) {
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	addMissing := func(before int) {
		for id, body := range sortedSections(replace) {
			if !done[id] && body != nil && sectionOrder[id] < before {
				appendSec(id, body)
				done[id] = true
			}
		}
	}
	for p := wasm[8:]; len(p) > 0; {
		id := p[0]
		size, n := binary.Uvarint(p[1:])
		body := p[1+n : 1+n+int(size)]
		p = p[1+n+int(size):]
		if id == 0 {
			if isDWARF(body) {
				continue
			}
			appendSec(id, body)
			continue
		}
		addMissing(sectionOrder[id])
		if r, ok := replace[id]; ok {
			done[id] = true
			if r == nil {
				continue
			}
			body = r
		}
		appendSec(id, body)
	}
	addMissing(len(sectionOrder) + 1)
	return out
}

// sortedSections yields the sections of m in the order they go in a module.
func sortedSections(m map[byte][]byte) func(yield func(byte, []byte) bool) {
	return func(yield func(byte, []byte) bool) {
		for pos := 1; pos <= len(sectionOrder); pos++ {
			for id, at := range sectionOrder {
				if at != pos {
					continue
				}
				if body, ok := m[id]; ok && !yield(id, body) {
					return
				}
			}
		}
	}
}

func isDWARF(custom []byte) bool {
	r := &Reader{P: custom}
	name := string(r.Bytes(r.Uvarint()))
	return r.Err == nil && strings.HasPrefix(name, ".debug_")
}

// maxLocals bounds the locals of a function the rewrite adds one to; the
// binary format allows 2^32, and no compiler comes near this.
const maxLocals = 1 << 20

// checkCode rewrites a code section, putting the check of the globals
// stop and stop+1 (fuel) at the entry of every function, unless it runs
// into a loop (see runsIntoLoop), and the counted check at the head of
// every loop (see WithStopChecks). params holds the number of parameters
// of each function of the section, in order.
func checkCode(sec []byte, stop uint64, params []uint64) ([]byte, error) {
	check := checkSequence(stop)
	r := &Reader{P: sec}
	n := r.Count()
	if r.Err == nil && n != uint64(len(params)) {
		return nil, fmt.Errorf("%w: %d functions have code, %d have a type", ErrInvalid, n, len(params))
	}
	out := make([]byte, 0, len(sec)+len(sec)/4)
	out = binary.AppendUvarint(out, n)
	var body []byte
	for i := uint64(0); i < n && r.Err == nil; i++ {
		whole := r.Bytes(r.Uvarint())
		if r.Err != nil {
			break
		}
		fn := &Reader{P: whole}
		groups := fn.Uvarint()
		declared := fn.P
		turns := params[i] // the added local's index: after every other
		for g := groups; g > 0 && fn.Err == nil; g-- {
			c := fn.Uvarint()
			if c >= maxLocals || turns+c >= maxLocals {
				return nil, fmt.Errorf("function %d: more than %d locals", i, maxLocals)
			}
			turns += c
			fn.Byte()
		}
		body = binary.AppendUvarint(body[:0], groups+1)
		body = append(body, declared[:len(declared)-len(fn.P)]...)
		body = append(body, 0x01, 0x7f) // the turns local: one i32
		loopCheck := loopCheckSequence(check, turns)
		if !runsIntoLoop(fn.P, stop) {
			body = append(body, check...)
		}
		run := fn.P // code read but not yet copied
		for len(fn.P) > 0 && fn.Err == nil {
			if l, ok := localIndex(fn.P); ok && l >= turns {
				return nil, fmt.Errorf("function %d: local %d does not exist", i, l)
			}
			if fn.instr(stop) == 0x03 { // loop: the check goes after it
				body = append(body, run[:len(run)-len(fn.P)]...)
				body = append(body, loopCheck...)
				run = fn.P
			}
		}
		body = append(body, run...)
		if fn.Err != nil {
			return nil, fmt.Errorf("function %d: %w", i, fn.Err)
		}
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	if r.Err != nil {
		return nil, r.Err
	}
	if len(r.P) != 0 {
		return nil, fmt.Errorf("%w: bytes after the last function", ErrInvalid)
	}
	return out, nil
}

// runsIntoLoop reports whether code, a function's body, runs from its
// entry straight into a loop: before the first loop, nothing but blocks
// and instructions that neither branch nor call. The loop's check then
// comes before anything could repeat or recurse, and a check at the entry
// would only pay twice. A function compiled from Go starts so: it enters
// the loop it resumes goroutines through, so half its checks go.
func runsIntoLoop(code []byte, globals uint64) bool {
	r := &Reader{P: code}
	for len(r.P) > 0 && r.Err == nil {
		switch r.instr(globals) {
		case 0x03: // loop
			return true
		case 0x04, 0x05, 0x0b, // if, else, end
			0x0c, 0x0d, 0x0e, 0x0f, // br, br_if, br_table, return
			0x10, 0x11: // call, call_indirect
			return false
		}
	}
	return false
}

// checkSequence is the check of WithStopChecks, for the globals stop and
// stop+1 (fuel).
func checkSequence(stop uint64) []byte {
	fuel := binary.AppendUvarint(nil, stop+1)
	var c []byte
	c = append(append(c, 0x23), fuel...)            // global.get fuel
	c = append(c, 0x41, 0x01, 0x6b)                 // i32.const 1; i32.sub
	c = append(append(c, 0x24), fuel...)            // global.set fuel
	c = append(append(c, 0x23), fuel...)            // global.get fuel
	c = append(c, 0x45, 0x04, 0x40)                 // i32.eqz; if
	c = appendSLEB(append(c, 0x41), FuelPerYield)   // i32.const FuelPerYield
	c = append(append(c, 0x24), fuel...)            // global.set fuel
	c = binary.AppendUvarint(append(c, 0x23), stop) // global.get stop
	c = append(c, 0x04, 0x40, 0x00, 0x0b)           // if; unreachable; end
	c = append(c, 0x41, 0x00, 0x40, 0x00, 0x1a)     // i32.const 0; memory.grow; drop
	return append(c, 0x0b)                          // end
}

// loopCheckSequence is the check at a loop's head: check itself once in
// LoopTurnsPerCheck turns, counted down in local turns.
func loopCheckSequence(check []byte, turns uint64) []byte {
	local := binary.AppendUvarint(nil, turns)
	var c []byte
	c = append(append(c, 0x20), local...) // local.get turns
	c = append(c, 0x04, 0x40)             // if
	c = append(append(c, 0x20), local...) // local.get turns
	c = append(c, 0x41, 0x01, 0x6b)       // i32.const 1; i32.sub
	c = append(append(c, 0x21), local...) // local.set turns
	c = append(c, 0x05)                   // else
	c = append(c, check...)
	c = appendSLEB(append(c, 0x41), LoopTurnsPerCheck-1) // i32.const LoopTurnsPerCheck-1
	c = append(append(c, 0x21), local...)                // local.set turns
	return append(c, 0x0b)                               // end
}

// localIndex is the local that code's first instruction names, if it is
// local.get, local.set or local.tee.
func localIndex(code []byte) (uint64, bool) {
	if len(code) < 2 || code[0] < 0x20 || code[0] > 0x22 {
		return 0, false
	}
	l, n := binary.Uvarint(code[1:])
	return l, n > 0
}

// paramCounts reads the number of parameters of each function a module
// defines, from its type and function sections.
func paramCounts(typeSec, funcSec []byte) ([]uint64, error) {
	var types []uint64
	r := &Reader{P: typeSec}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		if r.Byte() != 0x60 {
			r.fail("function type")
			break
		}
		params := r.Uvarint()
		r.Bytes(params)
		r.Bytes(r.Uvarint())
		types = append(types, params)
	}
	if err := r.end("type section"); err != nil {
		return nil, err
	}
	var params []uint64
	r = &Reader{P: funcSec}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		t := r.Uvarint()
		if r.Err != nil {
			break
		}
		if t >= uint64(len(types)) {
			return nil, fmt.Errorf("%w: function type %d does not exist", ErrInvalid, t)
		}
		params = append(params, types[t])
	}
	return params, r.end("function section")
}

// appendSLEB appends v in signed LEB128, the encoding of i32.const.
func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
