package sandbox

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Section ids the stop-check rewrite touches, besides those in
// snapshot_module.go.
const (
	secStart = 8
	secCode  = 10
)

// stopExport names the global the stop-check rewrite adds: 0 while the
// guest may run, 1 once it must stop. startExport names the start
// function the rewrite turns into an export.
const (
	stopExport  = "cairn.stop"
	startExport = "cairn.start"
)

// stopChecked is a module rewritten so that the host can stop it from
// another goroutine (see withStopChecks).
type stopChecked struct {
	code  []byte
	start bool // the module had a start function, now exported as startExport
}

// withStopChecks rewrites a module so that setting one global stops it.
// It adds a mutable i32 global, exported as stopExport, and at the entry of
// every function and the head of every loop the check
//
//	global.get $stop
//	if
//	  unreachable
//	end
//
// so a guest traps at its next call or loop iteration once the host sets
// the global: nothing runs long without passing a check, since code that
// neither loops nor calls ends within its own length. This is what
// wazero's WithCloseOnContextDone provides, at a fraction of its cost: its
// check, at loop heads only, is a call into the runtime, which keeps
// values out of registers across every loop of a Go module (RATIONALE.md,
// "Stopping a guest"). It also catches a guest that recurses without
// looping, which wazero's does not.
//
// A start function would run during instantiation, before the host can
// arm the stop; the rewrite exports it as startExport instead, for the
// host to call once armed.
//
// The guest cannot reach the global: the rewrite refuses a module whose
// code names a global it does not define, and the new global is one past
// the last.
//
// # Errors
//
// An error naming what it could not read or does not support (an
// instruction of a proposal the sandbox does not enable); such a module
// is stopped by wazero's mechanism instead.
func withStopChecks(wasm []byte) (*stopChecked, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	exports, err := exportNames(secs[secExport])
	if err != nil {
		return nil, err
	}
	if exports[stopExport] || exports[startExport] {
		return nil, fmt.Errorf("the module already exports %s or %s", stopExport, startExport)
	}
	imported, err := countImportedGlobals(secs[secImport])
	if err != nil {
		return nil, err
	}
	own, err := (&reader{p: secs[secGlobal]}).countOnly()
	if err != nil {
		return nil, err
	}
	stop := uint64(imported) + own
	code, err := checkCode(secs[secCode], stop)
	if err != nil {
		return nil, err
	}
	globals := binary.AppendUvarint(nil, own+1)
	if own > 0 {
		r := &reader{p: secs[secGlobal]}
		r.uvarint()
		globals = append(globals, r.p...)
	}
	globals = append(globals, 0x7f, 0x01, 0x41, 0x00, 0x0b) // (mut i32) (i32.const 0)

	entries := appendName(nil, stopExport)
	entries = append(entries, 0x03)
	entries = binary.AppendUvarint(entries, stop)
	added := 1
	out := &stopChecked{}
	replace := map[byte][]byte{secGlobal: globals, secCode: code}
	if start, ok := secs[secStart]; ok {
		r := &reader{p: start}
		fn := r.uvarint()
		if r.err != nil || len(r.p) != 0 {
			return nil, fmt.Errorf("%w: malformed start section", ErrInvalidModule)
		}
		entries = appendName(entries, startExport)
		entries = append(entries, 0x00)
		entries = binary.AppendUvarint(entries, fn)
		added++
		replace[secStart] = nil
		out.start = true
	}
	if replace[secExport], err = appendExports(secs[secExport], added, entries); err != nil {
		return nil, err
	}
	out.code = rebuildSections(wasm, replace)
	return out, nil
}

// countOnly reads the length of a vector.
func (r *reader) countOnly() (uint64, error) {
	n := r.count()
	return n, r.err
}

// sectionOrder is where each known section goes in a module.
var sectionOrder = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 12: 10, 10: 11, 11: 12}

// rebuildSections copies wasm with the sections in replace swapped in,
// added where the module has none, and removed where replace holds nil.
// Custom sections of DWARF are dropped: they locate code by offsets the
// rewrite moves.
func rebuildSections(wasm []byte, replace map[byte][]byte) []byte {
	out := append([]byte(nil), wasm[:8]...)
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
	r := &reader{p: custom}
	name := string(r.bytes(r.uvarint()))
	return r.err == nil && strings.HasPrefix(name, ".debug_")
}

// checkCode rewrites a code section, putting the stop check (on global
// stop) at the entry of every function and the head of every loop.
func checkCode(sec []byte, stop uint64) ([]byte, error) {
	check := []byte{0x23}
	check = binary.AppendUvarint(check, stop)
	check = append(check, 0x04, 0x40, 0x00, 0x0b)

	r := &reader{p: sec}
	n := r.count()
	out := binary.AppendUvarint(nil, n)
	var body []byte
	for i := uint64(0); i < n && r.err == nil; i++ {
		whole := r.bytes(r.uvarint())
		if r.err != nil {
			break
		}
		fn := &reader{p: whole}
		for locals := fn.uvarint(); locals > 0 && fn.err == nil; locals-- {
			fn.uvarint()
			fn.byte()
		}
		body = append(body[:0], whole[:len(whole)-len(fn.p)]...)
		body = append(body, check...)
		for len(fn.p) > 0 && fn.err == nil {
			start := fn.p
			op := fn.instr(stop)
			body = append(body, start[:len(start)-len(fn.p)]...)
			if op == 0x03 { // loop
				body = append(body, check...)
			}
		}
		if fn.err != nil {
			return nil, fmt.Errorf("function %d: %w", i, fn.err)
		}
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.p) != 0 {
		return nil, fmt.Errorf("%w: bytes after the last function", ErrInvalidModule)
	}
	return out, nil
}
