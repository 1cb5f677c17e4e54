package wasmcode

import (
	"encoding/binary"
	"fmt"
)

// SecTable is the table section's id.
const SecTable = 4

// TableLimitError is a module whose tables pass BoundTables' limits.
type TableLimitError struct{ What string }

func (e *TableLimitError) Error() string { return e.What }

// BoundTables returns wasm with every table it declares bounded, so that
// all of them together never hold more than maxEntries entries: wazero
// makes a table's entries, 8 bytes each, whole when it makes an instance,
// and table.grow adds up to the table's maximum, which is 2^32 entries
// when the module declares none. A module that declares more than
// maxTables tables, or whose tables' initial sizes sum past maxEntries, is
// refused with a *TableLimitError. Otherwise what maxEntries leaves after
// the initial sizes is shared evenly: each table's maximum is lowered to
// its initial size and its share, unless it was lower. wasm is returned
// as it is when no maximum is lowered.
func BoundTables(wasm []byte, maxTables, maxEntries uint64) ([]byte, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return nil, err
	}
	tables, err := readTables(secs[SecTable])
	if err != nil {
		return nil, err
	}
	if uint64(len(tables)) > maxTables {
		return nil, &TableLimitError{fmt.Sprintf("it declares %d tables, past the limit of %d", len(tables), maxTables)}
	}
	var initial uint64
	for _, t := range tables {
		initial += t.min // each below 2^32, and at most 2^32 of them: no overflow
	}
	if initial > maxEntries {
		return nil, &TableLimitError{fmt.Sprintf("its tables start with %d entries, past the limit of %d", initial, maxEntries)}
	}
	if len(tables) == 0 {
		return wasm, nil
	}
	share := (maxEntries - initial) / uint64(len(tables))
	lowered := false
	for i := range tables {
		if bound := tables[i].min + share; !tables[i].hasMax || tables[i].max > bound {
			tables[i].max, tables[i].hasMax, lowered = bound, true, true
		}
	}
	if !lowered {
		return wasm, nil
	}
	return Rebuild(wasm, map[byte][]byte{SecTable: encodeTables(tables)}), nil
}

// table is one entry of the table section: its reference type and limits.
type table struct {
	ref      byte
	min, max uint64
	hasMax   bool
}

// readTables reads the table section. Limits of any form but the two of
// 32-bit tables (a minimum, or a minimum and a maximum) are refused.
func readTables(sec []byte) ([]table, error) {
	r := &Reader{P: sec}
	n := r.Count()
	var out []table
	for i := uint64(0); i < n && r.Err == nil; i++ {
		t := table{ref: r.Byte()}
		flags := r.Byte()
		if flags > 1 {
			r.fail("table limits")
			break
		}
		t.min = r.Uvarint()
		if t.hasMax = flags == 1; t.hasMax {
			t.max = r.Uvarint()
		}
		if t.min >= 1<<32 || t.max >= 1<<32 || (t.hasMax && t.max < t.min) {
			r.fail("table limits")
			break
		}
		out = append(out, t)
	}
	return out, r.end("table section")
}

// encodeTables is the table section that holds tables.
func encodeTables(tables []table) []byte {
	out := binary.AppendUvarint(nil, uint64(len(tables)))
	for _, t := range tables {
		out = append(out, t.ref, 1)
		out = binary.AppendUvarint(out, t.min)
		out = binary.AppendUvarint(out, t.max)
	}
	return out
}
