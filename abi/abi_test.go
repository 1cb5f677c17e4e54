package abi

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// minimalModule is the smallest valid wasm module: the preamble alone.
var minimalModule = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// moduleWithType adds a type section (id 1) holding one func type () -> ().
var moduleWithType = append(append([]byte(nil), minimalModule...), 0x01, 0x04, 0x01, 0x60, 0x00, 0x00)

func sampleManifest() Manifest {
	return Manifest{ABI: Version, Tools: []Tool{{
		Name:        "read_file",
		Description: "Reads a file.",
		InputSchema: `{"type":"object"}`,
		Idempotent:  true,
		Needs:       Needs{Workspace: AccessReadOnly},
	}}}
}

func TestManifestSectionRoundTrip(t *testing.T) {
	m := sampleManifest()
	packed, err := WithManifest(moduleWithType, m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(packed, moduleWithType) {
		t.Fatal("packing changed the module's existing sections")
	}
	got, err := ReadManifest(packed)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tools[0].Name != "read_file" || got.Tools[0].Needs.Workspace != AccessReadOnly {
		t.Fatalf("manifest round trip: got %+v", got)
	}

	// Packing again replaces the section instead of adding a second one.
	m.Tools[0].Description = "Reads a file, again."
	repacked, err := WithManifest(packed, m)
	if err != nil {
		t.Fatal(err)
	}
	got, err = ReadManifest(repacked)
	if err != nil {
		t.Fatalf("repacked module: %v", err)
	}
	if got.Tools[0].Description != "Reads a file, again." {
		t.Fatalf("repack kept the old manifest: %+v", got)
	}
	if len(repacked) != len(packed)+len(" again,") {
		t.Fatalf("repacked size %d, want %d", len(repacked), len(packed)+7)
	}
}

func TestReadManifestErrors(t *testing.T) {
	packed, err := WithManifest(minimalModule, sampleManifest())
	if err != nil {
		t.Fatal(err)
	}
	future := sampleManifest()
	future.ABI = Version + 1
	futureContent, _ := Marshal(future)
	futureModule := append(append([]byte(nil), minimalModule...), customSection(ManifestSection, futureContent)...)
	twice := append(append([]byte(nil), packed...), packed[8:]...)

	tests := []struct {
		name string
		wasm []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrNotWasm, ""},
		{"not wasm", []byte("#!/bin/sh\necho hi\n"), ErrNotWasm, ""},
		{"no manifest", moduleWithType, ErrNoManifest, ""},
		{"truncated section", packed[:len(packed)-3], ErrNotWasm, "runs past the end"},
		{"newer ABI", futureModule, ErrNewerABI, "ABI version 2"},
		{"two sections", twice, nil, "two cairn.manifest sections"},
		{"garbage content", append(append([]byte(nil), minimalModule...), customSection(ManifestSection, []byte{0xff, 0x00})...), nil, "decode manifest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadManifest(tt.wasm)
			if err == nil {
				t.Fatal("want an error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %q does not say %q", err, tt.msg)
			}
		})
	}
}

func TestManifestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Manifest)
		msg  string
	}{
		{"no tools", func(m *Manifest) { m.Tools = nil }, "no tools"},
		{"bad name", func(m *Manifest) { m.Tools[0].Name = "Read File" }, "tool name"},
		{"duplicate", func(m *Manifest) { m.Tools = append(m.Tools, m.Tools[0]) }, "listed twice"},
		{"bad access", func(m *Manifest) { m.Tools[0].Needs.Workspace = "all" }, "workspace access"},
		{"zero abi", func(m *Manifest) { m.ABI = 0 }, "not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sampleManifest()
			tt.edit(&m)
			err := m.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want an error saying %q", err, tt.msg)
			}
		})
	}
}

func TestDecodeResponse(t *testing.T) {
	good, _ := Marshal(Response{ABI: Version, Output: "ok"})
	newer, _ := Marshal(Response{ABI: Version + 1, Output: "ok"})
	dup := []byte{0xa2, 0x63, 'a', 'b', 'i', 0x01, 0x63, 'a', 'b', 'i', 0x01}
	indef := []byte{0xbf, 0x63, 'a', 'b', 'i', 0x01, 0xff}
	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"good", good, true},
		{"trailing bytes", append(append([]byte(nil), good...), 0x00), false},
		{"newer", newer, false},
		{"duplicate key", dup, false},
		{"indefinite map", indef, false},
		{"empty", nil, false},
		{"text", []byte("hello"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeResponse(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && r.Output != "ok" {
				t.Fatalf("output %q", r.Output)
			}
		})
	}
}

func TestAccessCovers(t *testing.T) {
	tests := []struct {
		grant, need Access
		want        bool
	}{
		{AccessNone, AccessNone, true},
		{AccessNone, AccessReadOnly, false},
		{AccessReadOnly, AccessReadOnly, true},
		{AccessReadOnly, AccessReadWrite, false},
		{AccessReadWrite, AccessReadOnly, true},
		{AccessReadWrite, AccessReadWrite, true},
	}
	for _, tt := range tests {
		if got := tt.grant.Covers(tt.need); got != tt.want {
			t.Errorf("%q covers %q = %v, want %v", tt.grant, tt.need, got, tt.want)
		}
	}
}

func TestDeterministicEncoding(t *testing.T) {
	a, _ := Marshal(sampleManifest())
	b, _ := Marshal(sampleManifest())
	if !bytes.Equal(a, b) {
		t.Fatal("the same manifest encoded to different bytes")
	}
}

func customSection(name string, content []byte) []byte {
	payload := appendUleb32(nil, uint32(len(name)))
	payload = append(payload, name...)
	payload = append(payload, content...)
	out := appendUleb32([]byte{0}, uint32(len(payload)))
	return append(out, payload...)
}

func FuzzReadManifest(f *testing.F) {
	packed, _ := WithManifest(moduleWithType, sampleManifest())
	f.Add(packed)
	f.Add(minimalModule)
	f.Add(moduleWithType)
	f.Add(packed[:len(packed)-1])
	f.Fuzz(func(t *testing.T, wasm []byte) {
		m, err := ReadManifest(wasm)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("ReadManifest returned an invalid manifest: %v", err)
		}
		if _, err := WithManifest(wasm, m); err != nil {
			t.Fatalf("a module that reads cannot be repacked: %v", err)
		}
	})
}

func FuzzDecodeRequest(f *testing.F) {
	good, _ := Marshal(Request{ABI: Version, Tool: "t", CallID: "c", Input: "{}", Workspace: WorkspaceDir})
	f.Add(good)
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRequest(b)
		if err != nil {
			return
		}
		again, err := Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeRequest(again); err != nil {
			t.Fatalf("re-encoded request does not decode: %v", err)
		}
	})
}
