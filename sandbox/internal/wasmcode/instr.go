package wasmcode

import "fmt"

// instr reads one instruction of a function body and returns its opcode
// (the prefix byte for a prefixed one). It knows the instructions of
// WebAssembly 2.0, which is what the sandbox's runtimes enable, and fails
// on any other, and on global.get or global.set of a global at or past
// globals.
func (r *Reader) instr(globals uint64) byte {
	if op, n := quickInstr(r.P, globals); n > 0 {
		r.P = r.P[n:]
		return op
	}
	op := r.Byte()
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
		r.blockType()
	case op == 0x0c || op == 0x0d: // br, br_if
		r.Uvarint()
	case op == 0x0e: // br_table
		for n := r.Uvarint(); n > 0 && r.Err == nil; n-- {
			r.Uvarint()
		}
		r.Uvarint()
	case op == 0x10: // call
		r.Uvarint()
	case op == 0x11: // call_indirect
		r.Uvarint()
		r.Uvarint()
	case op == 0x1c: // select t*
		for n := r.Uvarint(); n > 0 && r.Err == nil; n-- {
			r.Byte()
		}
	case op >= 0x20 && op <= 0x22: // local.get, local.set, local.tee
		r.Uvarint()
	case op == 0x23 || op == 0x24: // global.get, global.set
		if g := r.Uvarint(); r.Err == nil && g >= globals {
			r.failf("global %d does not exist", g)
		}
	case op == 0x25 || op == 0x26: // table.get, table.set
		r.Uvarint()
	case op >= 0x28 && op <= 0x3e: // loads and stores
		r.memarg()
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.memoryIndex()
	case op == 0x41 || op == 0x42: // i32.const, i64.const
		r.sleb()
	case op == 0x43: // f32.const
		r.Bytes(4)
	case op == 0x44: // f64.const
		r.Bytes(8)
	case op == 0xd0: // ref.null
		r.Byte()
	case op == 0xd2: // ref.func
		r.Uvarint()
	case op == 0xfc:
		r.miscInstr()
	case op == 0xfd:
		r.vectorInstr()
	case op <= 0x01, op == 0x05, op == 0x0b, op == 0x0f, op == 0x1a, op == 0x1b,
		op >= 0x45 && op <= 0xc4, op == 0xd1:
		// no immediates
	default:
		r.failf("instruction 0x%02x", op)
	}
	return op
}

// failf fails with an unsupported or invalid instruction.
func (r *Reader) failf(format string, args ...any) {
	if r.Err == nil {
		r.Err = fmt.Errorf("unsupported code: "+format, args...)
	}
	r.P = nil
}

// blockType reads the type of a block, loop or if: empty, a value type,
// or a type index.
func (r *Reader) blockType() {
	if len(r.P) > 0 {
		switch r.P[0] {
		case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
			r.Byte()
			return
		}
	}
	if r.sleb() < 0 && r.Err == nil {
		r.failf("block type")
	}
}

// memarg reads a memory access's alignment and offset. An alignment that
// names a memory (the multi-memory proposal) is not supported.
func (r *Reader) memarg() {
	if align := r.Uvarint(); align >= 1<<6 && r.Err == nil {
		r.failf("memory index in alignment %d", align)
	}
	r.Uvarint()
}

// memoryIndex reads the memory operand of memory.size and friends, which
// must be memory 0.
func (r *Reader) memoryIndex() {
	if r.Byte() != 0 && r.Err == nil {
		r.failf("memory index")
	}
}

// miscInstr reads an instruction of the 0xfc prefix: saturating
// conversions, bulk memory and table operations.
func (r *Reader) miscInstr() {
	switch sub := r.Uvarint(); {
	case sub <= 7: // trunc_sat
	case sub == 8: // memory.init
		r.Uvarint()
		r.memoryIndex()
	case sub == 9 || sub == 13 || (sub >= 15 && sub <= 17): // data.drop, elem.drop, table.grow/size/fill
		r.Uvarint()
	case sub == 10: // memory.copy
		r.memoryIndex()
		r.memoryIndex()
	case sub == 11: // memory.fill
		r.memoryIndex()
	case sub == 12 || sub == 14: // table.init, table.copy
		r.Uvarint()
		r.Uvarint()
	default:
		r.failf("instruction 0xfc %d", sub)
	}
}

// vectorInstr reads an instruction of the 0xfd prefix (128-bit SIMD).
func (r *Reader) vectorInstr() {
	switch sub := r.Uvarint(); {
	case sub <= 11 || sub == 92 || sub == 93: // loads, stores, load_zero
		r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.Bytes(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		r.Byte()
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		r.memarg()
		r.Byte()
	case sub <= 0xff:
		// no immediates
	default:
		r.failf("instruction 0xfd %d", sub)
	}
}

// quickInstr measures, without a call per byte, the instructions that make
// up most code: those without immediates and those with one or two small
// integers. It returns the opcode and length, or length 0 to leave the
// instruction to instr's reading of it.
func quickInstr(p []byte, globals uint64) (byte, int) {
	if len(p) < 2 {
		return 0, 0
	}
	op := p[0]
	switch {
	case op >= 0x45 && op <= 0xc4, op == 0x0b, op == 0x1a, op == 0x1b, op == 0x0f, op == 0x01:
		return op, 1
	case op >= 0x20 && op <= 0x22, op == 0x10, op == 0x0c, op == 0x0d, op == 0x41, op == 0x42:
		if n := lebLen(p[1:]); n > 0 {
			return op, 1 + n
		}
	case op == 0x23 || op == 0x24:
		if p[1] < 0x80 && uint64(p[1]) < globals {
			return op, 2
		}
	case op >= 0x28 && op <= 0x3e:
		if p[1] < 0x40 { // an alignment that names no memory
			if n := lebLen(p[2:]); n > 0 {
				return op, 2 + n
			}
		}
	}
	return 0, 0
}

// lebLen is the length of the LEB128 integer p starts with, or 0 when it
// does not end within p or 10 bytes.
func lebLen(p []byte) int {
	for i := 0; i < len(p) && i < 10; i++ {
		if p[i]&0x80 == 0 {
			return i + 1
		}
	}
	return 0
}
