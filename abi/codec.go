package abi

import (
	"fmt"

	"github.com/fxamacker/cbor/v2"

	"github.com/cairnrun/cairn/internal/strictcbor"
)

// MaxMessageSize bounds every message the codec decodes, so a hostile module
// cannot make the host allocate without limit.
const MaxMessageSize = 16 << 20

// The encoder is deterministic (RFC 8949 core deterministic encoding) so the
// same message is always the same bytes. The decoder is hardened: bounded
// nesting and lengths, no duplicate map keys, no indefinite lengths, and
// unknown keys ignored so that newer minor fields do not break older readers.
var (
	encMode = strictcbor.Must(cbor.CoreDetEncOptions().EncMode())
	decMode = strictcbor.DecMode(strictcbor.Limits{Depth: 16, Elements: 1 << 16, Pairs: 1 << 16})
)

// Marshal encodes v (a Request, Response or Manifest) as deterministic CBOR.
func Marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case Request:
		if b, ok := encodeRequest(v); ok {
			return b, nil
		}
	case Response:
		if b, ok := encodeResponse(v); ok {
			return b, nil
		}
	}
	return encMode.Marshal(v)
}

// DecodeRequest decodes one Request and checks its version.
func DecodeRequest(b []byte) (Request, error) {
	r, ok := decodeRequest(b)
	if !ok {
		if err := unmarshal(b, &r); err != nil {
			return r, fmt.Errorf("decode request: %w", err)
		}
	}
	if err := checkVersion(r.ABI); err != nil {
		return r, fmt.Errorf("decode request: %w", err)
	}
	return r, nil
}

// DecodeResponse decodes one Response and checks its version.
func DecodeResponse(b []byte) (Response, error) {
	r, ok := decodeResponse(b)
	if !ok {
		if err := unmarshal(b, &r); err != nil {
			return r, fmt.Errorf("decode response: %w", err)
		}
	}
	if err := checkVersion(r.ABI); err != nil {
		return r, fmt.Errorf("decode response: %w", err)
	}
	return r, nil
}

// DecodeManifest decodes one Manifest and validates it.
func DecodeManifest(b []byte) (Manifest, error) {
	var m Manifest
	if err := unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("decode manifest: %w", err)
	}
	if err := m.Validate(); err != nil {
		return m, fmt.Errorf("invalid manifest: %w", err)
	}
	return m, nil
}

// unmarshal decodes exactly one CBOR item; trailing bytes are an error.
func unmarshal(b []byte, v any) error {
	if len(b) > MaxMessageSize {
		return fmt.Errorf("message is %d bytes, limit %d", len(b), MaxMessageSize)
	}
	if len(b) == 0 {
		return fmt.Errorf("empty message")
	}
	return decMode.Unmarshal(b, v)
}
