package netguard

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// What a journal may hold of a request: its parts redacted (Redact,
// RedactURL) and bounded, so that a request a tool makes, refused or sent,
// never makes a record of more than some tens of KiB, however large the
// method, URL or headers it asked for.

const (
	// MaxURLBytes bounds a request's URL, as common servers bound it: a
	// longer URL is refused before anything else of the request is
	// looked at, and so is one longer as it is sent, percent-encoded.
	MaxURLBytes = 8 << 10
	// maxMethodBytes bounds a method as it is recorded or quoted: no
	// method a grant names is longer.
	maxMethodBytes = 32
	// clipKeep is how much of a clipped value is kept.
	clipKeep = 512
	// HeadersNotRecorded is the one name of a request's headers as
	// recorded when they are past the bounds (MaxHeaders, MaxHeaderBytes):
	// not a token, so no header sent has it.
	HeadersNotRecorded = "(headers not recorded)"
)

// Clip is s as a record may hold a value of any size: s itself up to max
// bytes; past that, its first bytes (at most 512), its size and its
// sha256 digest, so that two values clipped alike are the same value.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return clipped(s, len(s), "")
}

// clipped is s's first bytes, with size and s's digest: "what" names
// what was that size.
func clipped(s string, size int, what string) string {
	keep := min(len(s), clipKeep)
	for keep > 0 && keep < len(s) && !utf8.RuneStart(s[keep]) {
		keep--
	}
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("%s… [%s%d bytes, sha256:%s]", s[:keep], what, size, hex.EncodeToString(sum[:]))
}

// RecordedURL is a request's URL as the journal keeps it: RedactURL's
// form and, for a URL past MaxURLBytes (which the grant refuses), the
// first bytes of that form, the URL's size and the form's digest.
func RecordedURL(raw string, secrets ...string) string {
	r := RedactURL(raw, secrets...)
	if len(raw) <= MaxURLBytes {
		return r
	}
	return clipped(r, len(raw), "a URL of ")
}

// RecordedMethod is a request's method as the journal keeps it: Clip'd.
func RecordedMethod(m string) string { return Clip(m, maxMethodBytes) }

// RecordedHeader is a request's headers as the journal keeps them:
// Redact's form, or, for headers past MaxHeaders or MaxHeaderBytes (which
// the grant refuses), one value under HeadersNotRecorded that says how many
// there were and of how many bytes, with the digest of their redacted form.
func RecordedHeader(h map[string][]string, secrets ...string) map[string][]string {
	n, size := headerSize(h)
	red := Redact(h, secrets...)
	if n <= MaxHeaders && size <= MaxHeaderBytes {
		return red
	}
	keys := make([]string, 0, len(red))
	for k := range red {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(d, "%q: %q\n", k, red[k])
	}
	return map[string][]string{HeadersNotRecorded: {fmt.Sprintf("%d headers of %d bytes, more than %d or %d (sha256:%s)",
		n, size, MaxHeaders, MaxHeaderBytes, hex.EncodeToString(d.Sum(nil)))}}
}

// headerSize counts a request's header values and their bytes as the
// bounds count them: each value with its name and 4 bytes (": ", CRLF).
func headerSize(h map[string][]string) (n, size int) {
	for k, vs := range h {
		for _, v := range vs {
			n++
			size += len(k) + len(v) + 4
		}
	}
	return n, size
}

// quoted is s for an error's text: quoted, its first 64 bytes only.
func quoted(s string) string {
	if len(s) <= 64 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", strings.ToValidUTF8(s[:64], ""), len(s))
}
