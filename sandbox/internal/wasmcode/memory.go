package wasmcode

// MemoryMin is the size, in 64 KiB pages, that the memory wasm defines
// has at its start: 0 when it defines none. (A memory it imports is not
// counted; the sandbox refuses any import but WASI's functions.)
func MemoryMin(wasm []byte) (uint64, error) {
	secs, err := Sections(wasm)
	if err != nil {
		return 0, err
	}
	sec := secs[SecMemory]
	if len(sec) == 0 {
		return 0, nil
	}
	r := &Reader{P: sec}
	var least uint64
	for i, n := uint64(0), r.Count(); i < n && r.Err == nil; i++ {
		flags := r.Byte()
		if flags&^3 != 0 { // memory64 and the rest: not read here
			r.fail("memory limits")
			break
		}
		if i == 0 {
			least = r.Uvarint()
		} else {
			r.Uvarint()
		}
		if flags&1 != 0 {
			r.Uvarint()
		}
	}
	return least, r.end("memory section")
}
