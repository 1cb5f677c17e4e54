package wasmcode

import (
	"reflect"
	"testing"
)

// activeSegment encodes an active data segment of memory 0 at off (an
// offset of less than 64, one byte of LEB128).
func activeSegment(off byte, b string) []byte {
	return append([]byte{0x00, 0x41, off, 0x0b, byte(len(b))}, b...)
}

// EmptyDataSegments moves the active segments' bytes out, joining those
// that follow each other into one run, keeps passive segments, and
// leaves each active one empty.
func TestEmptyDataSegmentsJoinsRuns(t *testing.T) {
	sec := []byte{5}
	sec = append(sec, activeSegment(0, "ab")...)
	sec = append(sec, activeSegment(2, "cd")...)
	sec = append(sec, 0x01, 3, 'p', 'q', 'r') // passive
	sec = append(sec, activeSegment(4, "")...)
	sec = append(sec, activeSegment(10, "xyz")...)
	out, runs, err := EmptyDataSegments(sec)
	if err != nil {
		t.Fatal(err)
	}
	want := []DataRun{{Off: 0, B: []byte("abcd")}, {Off: 10, B: []byte("xyz")}}
	if !reflect.DeepEqual(runs, want) {
		t.Fatalf("runs %q, want %q", runs, want)
	}
	wantOut := []byte{5, 1, 0, 1, 0, 0x01, 3, 'p', 'q', 'r', 1, 0, 1, 0}
	if !reflect.DeepEqual(out, wantOut) {
		t.Fatalf("section % x, want % x", out, wantOut)
	}
	sec[6] = '!' // the runs are copies, not views of the section
	if string(runs[0].B) != "abcd" {
		t.Fatalf("run changed with the section: %q", runs[0].B)
	}
}
