package netguard

import (
	"encoding/base64"
	"strings"
)

// finder finds secret values in what a server sends back, in the forms a
// server that echoes one gives it:
//
//   - in any ASCII case: a hex token upper-cased is the same token, and
//     one a server folded to one case is all but given away;
//   - each byte as it is or escaped: percent-encoded (%2F or %2f; '+'
//     for a space), as a URL's query or path holds it, or as a JSON
//     string escapes it (\/, \\, \", \u002F), as a server that echoes a
//     request in JSON writes it; escaped and plain bytes mixed;
//   - base64-encoded, in the standard or the URL alphabet, alone or inside
//     a longer text encoded (base64Forms), for a secret of at least
//     minBase64 bytes, and so escaped or in any case as well.
//
// What it finds are spans of the text's bytes, so that what is replaced
// is the secret and nothing else of the text. The zero finder finds
// nothing. A finder is safe for concurrent use.
type finder struct {
	forms [][]byte // ASCII lower case
	// byFirst lists, for each byte, the forms that begin with it.
	byFirst [256][]int
	// starts marks the bytes of text a form may begin at: its first
	// byte in either case, and those that begin an escape.
	starts [256]bool
}

// newFinder is the finder of secrets: each non-empty one, as it is and
// base64-encoded.
func newFinder(secrets []string) *finder {
	f := &finder{}
	seen := map[string]bool{"": true}
	for _, s := range secrets {
		for _, form := range append([]string{s}, base64Forms(s)...) {
			if w := asciiLower(form); !seen[w] {
				seen[w] = true
				f.add(w)
			}
		}
	}
	return f
}

// add adds the form w, in lower case and not empty.
func (f *finder) add(w string) {
	f.byFirst[w[0]] = append(f.byFirst[w[0]], len(f.forms))
	f.forms = append(f.forms, []byte(w))
	f.starts[w[0]], f.starts[upper(w[0])] = true, true
	f.starts['%'], f.starts['\\'] = true, true
	f.starts['+'] = f.starts['+'] || w[0] == ' '
}

// minBase64 is the shortest secret whose base64 forms are looked for: a
// shorter one's are a few characters that text not made from it holds
// too.
const minBase64 = 8

// base64Forms are the characters that the base64 encoding of a text
// holding s has wherever s is in it, whatever else the text holds: for
// each of the three places in a group of three bytes where s may begin,
// the characters that depend on the bytes of s alone; and the encoding
// of s alone, padded and not. Each in the standard alphabet and the URL
// one. None for a secret shorter than minBase64.
func base64Forms(s string) []string {
	if len(s) < minBase64 {
		return nil
	}
	out := []string{base64.StdEncoding.EncodeToString([]byte(s)), base64.RawStdEncoding.EncodeToString([]byte(s))}
	for at := range 3 {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, at), s...))
		first := (8*at + 5) / 6       // the first character with no bit of the bytes before s
		last := 8 * (at + len(s)) / 6 // past the last with no bit of the bytes after it
		out = append(out, enc[first:last])
	}
	url := strings.NewReplacer("+", "-", "/", "_")
	for _, f := range out[:5] {
		out = append(out, url.Replace(f))
	}
	return out
}

// spans are the byte ranges [start, end) of text that hold a secret, in
// order, overlapping ones merged.
func (f *finder) spans(text []byte) [][2]int {
	if len(f.forms) == 0 {
		return nil
	}
	var out [][2]int
	for p := range text {
		if !f.starts[text[p]] {
			continue
		}
		ds, n := decodings(text, p)
		end := -1
		for _, d := range ds[:n] {
			for _, i := range f.byFirst[d.b] {
				end = max(end, matchAt(text, p+d.n, f.forms[i][1:]))
			}
		}
		switch last := len(out) - 1; {
		case end < 0:
		case last >= 0 && p <= out[last][1]:
			out[last][1] = max(out[last][1], end)
		default:
			out = append(out, [2]int{p, end})
		}
	}
	return out
}

// matchAt is where w ends in text if text[p:] begins with it, each byte
// in any case and as it is or escaped; -1 if it does not.
func matchAt(text []byte, p int, w []byte) int {
	for j := 0; j < len(w); j++ {
		ds, n := decodings(text, p)
		if n == 1 {
			if ds[0].b != w[j] {
				return -1
			}
			p += ds[0].n
			continue
		}
		// A byte that is itself and an escape ('%' of "%25", '+'):
		// either may be the one that goes on to match.
		for _, d := range ds[:n] {
			if d.b == w[j] {
				if end := matchAt(text, p+d.n, w[j+1:]); end >= 0 {
					return end
				}
			}
		}
		return -1
	}
	return p
}

// decoded is a byte, in lower case, and how many bytes of text stand for it.
type decoded struct {
	b byte
	n int
}

// decodings are the bytes text[p:] may begin with: its first byte, and
// the byte an escape there stands for; n of them (0 at the end of text).
func decodings(text []byte, p int) (ds [2]decoded, n int) {
	if p >= len(text) {
		return ds, 0
	}
	ds[0] = decoded{lower(text[p]), 1}
	rest := text[p+1:]
	switch text[p] {
	case '%':
		if len(rest) >= 2 && isHex(rest[0]) && isHex(rest[1]) {
			ds[1] = decoded{lower(unhex(rest[0])<<4 | unhex(rest[1])), 3}
			return ds, 2
		}
	case '+':
		ds[1] = decoded{' ', 1}
		return ds, 2
	case '\\':
		switch {
		case len(rest) >= 1 && (rest[0] == '/' || rest[0] == '\\' || rest[0] == '"'):
			ds[1] = decoded{rest[0], 2}
			return ds, 2
		case len(rest) >= 5 && rest[0] == 'u' && string(rest[1:3]) == "00" && isHex(rest[3]) && isHex(rest[4]) && unhex(rest[3]) < 8:
			ds[1] = decoded{lower(unhex(rest[3])<<4 | unhex(rest[4])), 6}
			return ds, 2
		}
	}
	return ds, 1
}

// hide is text with each span that holds a secret replaced by Redacted.
func (f *finder) hide(text string) string {
	sp := f.spans([]byte(text))
	if len(sp) == 0 {
		return text
	}
	return string(replaceSpans([]byte(text), sp))
}

// holds reports whether text holds a secret.
func (f *finder) holds(text string) bool { return len(f.spans([]byte(text))) > 0 }

func replaceSpans(b []byte, sp [][2]int) []byte {
	out := make([]byte, 0, len(b))
	at := 0
	for _, s := range sp {
		out = append(out, b[at:s[0]]...)
		out = append(out, Redacted...)
		at = s[1]
	}
	return append(out, b[at:]...)
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiLower is s with its ASCII letters in lower case.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lower(c)
	}
	return string(b)
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
