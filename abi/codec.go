package abi

import (
	"fmt"
	"strings"
	"unicode/utf8"

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
	decMode = strictcbor.DecMode(limits)
	// respMode reads a Response as decMode does, but takes text that is
	// not UTF-8, and byte strings, for its strings: a tool's output is
	// whatever bytes it wrote, and DecodeResponse makes them UTF-8.
	respMode = strictcbor.Must(responseOptions().DecMode())
)

// limits bound every message the codec decodes.
var limits = strictcbor.Limits{Depth: 16, Elements: 1 << 16, Pairs: 1 << 16}

func responseOptions() cbor.DecOptions {
	opts := strictcbor.Options(limits)
	opts.UTF8 = cbor.UTF8DecodeInvalid
	opts.ByteStringToString = cbor.ByteStringToStringAllowed
	return opts
}

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

// DecodeResponse decodes one Response and checks its version. Its output
// and error may be text strings that are not UTF-8, or byte strings: each
// byte sequence that is not UTF-8 becomes U+FFFD, so that a tool whose
// output is not text still answers, readably.
func DecodeResponse(b []byte) (Response, error) {
	r, ok := decodeResponse(b)
	if !ok {
		if err := unmarshalWith(respMode, b, &r); err != nil {
			return r, fmt.Errorf("decode response: %w", err)
		}
		r.Output, r.Error = ValidText(r.Output), ValidText(r.Error)
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

// ValidText is s with each byte sequence that is not UTF-8 replaced by
// U+FFFD, the replacement character; s itself when it is UTF-8.
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// unmarshal decodes exactly one CBOR item; trailing bytes are an error.
func unmarshal(b []byte, v any) error { return unmarshalWith(decMode, b, v) }

func unmarshalWith(mode cbor.DecMode, b []byte, v any) error {
	if len(b) > MaxMessageSize {
		return fmt.Errorf("message is %d bytes, limit %d", len(b), MaxMessageSize)
	}
	if len(b) == 0 {
		return fmt.Errorf("empty message")
	}
	return mode.Unmarshal(b, v)
}
