package wasmcode

import "testing"

// MemoryMin reads the initial size of the memory a module defines, with
// or without a maximum, and 0 for a module that defines none.
func TestMemoryMin(t *testing.T) {
	header := []byte("\x00asm\x01\x00\x00\x00")
	for _, c := range []struct {
		name string
		sec  []byte
		want uint64
	}{
		{"none", nil, 0},
		{"min", []byte{5, 3, 1, 0, 45}, 45},
		{"min and max", []byte{5, 6, 1, 1, 0x80, 0x01, 0x80, 0x02}, 128},
	} {
		got, err := MemoryMin(append(append([]byte{}, header...), c.sec...))
		if err != nil || got != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, got, err, c.want)
		}
	}
	if _, err := MemoryMin(append(append([]byte{}, header...), 5, 3, 1, 4, 1)); err == nil {
		t.Error("a memory64 memory read as a 32-bit one")
	}
}
