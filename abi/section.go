package abi

import (
	"bytes"
	"errors"
	"fmt"
)

// A wasm binary is the 8-byte preamble (magic and version 1) followed by
// sections, each a one-byte id, a LEB128 u32 size and that many bytes.
// A custom section (id 0) starts with its name, a LEB128 length and UTF-8.
var wasmPreamble = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// ErrNoManifest is returned by ReadManifest for a valid module without a
// ManifestSection.
var ErrNoManifest = errors.New("module has no " + ManifestSection + " section")

// ErrNotWasm is returned for bytes that are not a wasm binary module.
var ErrNotWasm = errors.New("not a WebAssembly binary module")

type section struct {
	id         byte
	start, end int // the whole section, header included
	name       string
	body       []byte // content after the name, for custom sections
}

// sections splits a wasm binary into its sections without interpreting them.
func sections(wasm []byte) ([]section, error) {
	if len(wasm) < len(wasmPreamble) || !bytes.Equal(wasm[:8], wasmPreamble) {
		return nil, ErrNotWasm
	}
	var out []section
	for off := 8; off < len(wasm); {
		s := section{id: wasm[off], start: off}
		size, n, err := uleb32(wasm[off+1:])
		if err != nil {
			return nil, fmt.Errorf("%w: section at offset %d: %v", ErrNotWasm, off, err)
		}
		body := off + 1 + n
		if uint64(body)+uint64(size) > uint64(len(wasm)) {
			return nil, fmt.Errorf("%w: section at offset %d runs past the end", ErrNotWasm, off)
		}
		s.end = body + int(size)
		if s.id == 0 {
			if err := s.parseName(wasm[body:s.end]); err != nil {
				return nil, fmt.Errorf("%w: custom section at offset %d: %v", ErrNotWasm, off, err)
			}
		}
		out = append(out, s)
		off = s.end
	}
	return out, nil
}

func (s *section) parseName(b []byte) error {
	l, n, err := uleb32(b)
	if err != nil {
		return err
	}
	if uint64(n)+uint64(l) > uint64(len(b)) {
		return errors.New("name runs past the section")
	}
	s.name = string(b[n : n+int(l)])
	s.body = b[n+int(l):]
	return nil
}

// ReadManifest returns the manifest in the module's ManifestSection. It does
// not run or compile the module.
//
// # Errors
//
// ErrNotWasm for bytes that are not a wasm module, ErrNoManifest when there
// is no section, ErrNewerABI (wrapped) for a manifest of a newer ABI, and a
// descriptive error for a section that does not decode or validate.
func ReadManifest(wasm []byte) (Manifest, error) {
	secs, err := sections(wasm)
	if err != nil {
		return Manifest{}, err
	}
	var found *section
	for i := range secs {
		if secs[i].id == 0 && secs[i].name == ManifestSection {
			if found != nil {
				return Manifest{}, fmt.Errorf("module has two %s sections", ManifestSection)
			}
			found = &secs[i]
		}
	}
	if found == nil {
		return Manifest{}, ErrNoManifest
	}
	return DecodeManifest(found.body)
}

// WithManifest returns a copy of wasm whose ManifestSection holds m,
// replacing any such section already there. The module's code is unchanged.
func WithManifest(wasm []byte, m Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("invalid manifest: %w", err)
	}
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	content, err := Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	out := append([]byte(nil), wasm[:8]...)
	for _, s := range secs {
		if s.id == 0 && s.name == ManifestSection {
			continue
		}
		out = append(out, wasm[s.start:s.end]...)
	}
	payload := appendUleb32(nil, uint32(len(ManifestSection)))
	payload = append(payload, ManifestSection...)
	payload = append(payload, content...)
	out = append(out, 0)
	out = appendUleb32(out, uint32(len(payload)))
	return append(out, payload...), nil
}

func uleb32(b []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, errors.New("truncated LEB128")
		}
		c := b[i]
		if i == 4 && c > 0x0f {
			return 0, 0, errors.New("LEB128 overflows u32")
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("LEB128 too long")
}

func appendUleb32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}
