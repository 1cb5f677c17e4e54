package strictcbor

import "testing"

// The decoder refuses what the package doc says it refuses, and accepts
// the same value written plainly.
func TestDecModeRefuses(t *testing.T) {
	dec := DecMode(Limits{Depth: 4, Elements: 16, Pairs: 16})
	tests := []struct {
		name string
		cbor []byte
		ok   bool
	}{
		{"a plain map", []byte{0xa1, 0x61, 'a', 0x01}, true},
		{"a duplicate key", []byte{0xa2, 0x61, 'a', 0x01, 0x61, 'a', 0x02}, false},
		{"an indefinite-length array", []byte{0x9f, 0x01, 0xff}, false},
		{"invalid UTF-8", []byte{0x61, 0xff}, false},
		{"too deep", []byte{0x81, 0x81, 0x81, 0x81, 0x81, 0x01}, false},
		{"too many elements", append([]byte{0x91}, make([]byte, 17)...), false},
		{"too many pairs", append([]byte{0xb1}, pairs(17)...), false},
	}
	for _, tt := range tests {
		var v any
		if err := dec.Unmarshal(tt.cbor, &v); (err == nil) != tt.ok {
			t.Errorf("%s: err %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// pairs is n map pairs with distinct small integer keys.
func pairs(n int) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		b = append(b, byte(i), 0)
	}
	return b
}

// The stored-data decoder reads a text string that is not UTF-8 as its
// bytes, and refuses the rest as DecMode does.
func TestStoredDecModeKeepsNamesThatAreNotUTF8(t *testing.T) {
	dec := StoredDecMode(Limits{Depth: 4, Elements: 16, Pairs: 16})
	var s string
	if err := dec.Unmarshal([]byte{0x62, 'a', 0xff}, &s); err != nil || s != "a\xff" {
		t.Fatalf("got %q, %v; want the bytes a, 0xff", s, err)
	}
	var v any
	if err := dec.Unmarshal([]byte{0xa2, 0x61, 'a', 0x01, 0x61, 'a', 0x02}, &v); err == nil {
		t.Fatal("a duplicate key was read")
	}
}
