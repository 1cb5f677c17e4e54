package wasmcode

import (
	"bytes"
	"errors"
	"os"
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

// writeSegments is what instantiating puts in memory for the active
// segments of a data section, applied one by one: the reference the runs
// are checked against.
func writeSegments(t *testing.T, sec []byte, size int) []byte {
	mem := make([]byte, size)
	err := eachSegment(sec, func(_ []byte, active bool, off uint64, b []byte) {
		if active {
			copy(mem[off:], b)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

// The runs of a Go module's tens of thousands of segments put in memory
// what the segments do, each run's bytes apart from the next (appending
// to one leaves the next as it was), and are made in a few allocations,
// not several for each segment.
func TestEmptyDataSegmentsOfAGoModule(t *testing.T) {
	wasm, err := os.ReadFile("../../../examples/tools/textstats/textstats.wasm")
	if err != nil {
		t.Fatal(err)
	}
	secs, err := Sections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	sec := secs[SecData]
	_, runs, err := EmptyDataSegments(sec)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) < 1000 {
		t.Fatalf("%d runs: not the module of many segments the test is for", len(runs))
	}
	var size uint64
	for _, r := range runs {
		size = max(size, r.Off+uint64(len(r.B)))
	}
	got := make([]byte, size)
	for _, r := range runs {
		copy(got[r.Off:], r.B)
	}
	if want := writeSegments(t, sec, len(got)); !bytes.Equal(got, want) {
		t.Fatal("the runs put in memory other bytes than the segments")
	}
	next := runs[1].B[0]
	runs[0].B = append(runs[0].B, next+1)
	if runs[1].B[0] != next {
		t.Fatal("appending to a run changed the next")
	}
	if n := testing.AllocsPerRun(3, func() { EmptyDataSegments(sec) }); n > 4 {
		t.Fatalf("%v allocations", n)
	}
}

// A rebuild's output is allocated at about its size, not the size of the
// module and of the sections replaced added together (megabytes of a Go
// module's code or data counted twice).
func TestRebuildAllocatesAboutItsSize(t *testing.T) {
	wasm, err := os.ReadFile("../../../examples/tools/textstats/textstats.wasm")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := WithStopChecks(wasm)
	if err != nil {
		t.Fatal(err)
	}
	rx, err := NewReactor(sc.Code)
	if err != nil {
		t.Fatal(err)
	}
	for name, code := range map[string][]byte{"stop checks": sc.Code, "fast mode": rx.Code} {
		if slack := cap(code) - len(code); slack > 64 {
			t.Errorf("%s: %d bytes allocated past the %d of the module", name, slack, len(code))
		}
	}
}

// A module's sections must come in the order the binary format gives
// them: the rewrites put each section they add or replace in that order,
// so a module out of it came out of WithStopChecks with its export
// section twice (FuzzStopChecks found it).
func TestSectionsOutOfOrderRefused(t *testing.T) {
	header := []byte("\x00asm\x01\x00\x00\x00")
	for name, secs := range map[string][]byte{
		"export before global": {0x07, 0x01, 0x00, 0x06, 0x01, 0x00},
		"code before function": {0x0a, 0x01, 0x00, 0x03, 0x01, 0x00},
		"unknown id":           {0x0d, 0x01, 0x00},
	} {
		if _, err := Sections(append(header[:8:8], secs...)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
		if _, err := WithStopChecks(append(header[:8:8], secs...)); err == nil {
			t.Errorf("%s: WithStopChecks took it", name)
		}
	}
	// Data count (12) goes before code (10), and custom sections anywhere.
	in := append(header[:8:8], 0x0c, 0x01, 0x00, 0x00, 0x02, 0x01, 'x', 0x0a, 0x01, 0x00)
	if _, err := Sections(in); err != nil {
		t.Errorf("data count, custom, code: %v", err)
	}
}
