package netguard

import (
	"net/http"
	"net/url"
	"strings"
)

// Redacted replaces a value that Redact hides.
const Redacted = "[redacted]"

// secretWords mark a header or query parameter whose value Redact hides
// wherever they appear in its name, in any case.
var secretWords = []string{"auth", "cookie", "token", "secret", "key", "password", "passwd", "session",
	"signature", "credential", "csrf", "xsrf"}

// secretName reports whether a header or parameter name marks a secret.
func secretName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// Redact is h as it may be recorded: the value of every header whose
// name contains one of auth, cookie, token, secret, key, password, passwd,
// session, signature, credential, csrf or xsrf (so Authorization,
// Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key...) is Redacted, and
// so is every value that holds one of the secret values given, in any
// case, escaped or base64-encoded (find.go). A name that holds a
// secret value has it replaced by Redacted.
func Redact(h map[string][]string, secrets ...string) map[string][]string {
	if len(h) == 0 {
		return nil
	}
	f := newFinder(secrets)
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		k = f.hide(http.CanonicalHeaderKey(k))
		for _, v := range vs {
			if secretName(k) || f.holds(v) {
				v = Redacted
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// HideSecrets is a response's headers as the tool may be given them: each
// secret value given replaced by Redacted in every name and value,
// wherever it is in them, in any case, escaped or base64-encoded
// (find.go), so that the tool never holds a secret a server echoes in
// its headers (a Location header, and so the URL the tool's client
// follows it to). The rest of a name or value is kept.
// Unlike Redact, it leaves the values of headers whose names mark secrets
// alone: they are the tool's (a Set-Cookie the server sends).
func HideSecrets(h http.Header, secrets ...string) http.Header {
	return newFinder(secrets).header(h)
}

// header is HideSecrets with f's secrets.
func (f *finder) header(h http.Header) http.Header {
	if len(h) == 0 || len(f.forms) == 0 {
		return h
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		k = f.hide(k)
		for _, v := range vs {
			out[k] = append(out[k], f.hide(v))
		}
	}
	return out
}

// RedactURL is raw as it may be recorded: the URL as the tool sent it,
// byte for byte, but for user credentials (dropped), the value of each
// query parameter whose name marks a secret (as for headers) or that
// holds a secret value, which is Redacted, and any secret value given,
// in any of the forms find.go finds, replaced by Redacted. The query is
// not decoded and encoded again: its pairs keep their order and their
// text, those a decoder would drop (with a ';' or a bad '%' escape)
// included; a parameter is taken to end at '&' or ';'. A URL that does
// not read is recorded as Redacted alone; the grant refuses it, so it is
// not sent.
func RedactURL(raw string, secrets ...string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Redacted
	}
	f := newFinder(secrets)
	rest, frag, hasFrag := strings.Cut(raw, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	if u.User != nil {
		rest = withoutUser(rest)
	}
	var b strings.Builder
	b.WriteString(rest)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(redactPairs(query, f))
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(redactPairs(frag, f))
	}
	return f.hide(b.String())
}

// RedactText is s with every secret value given, in any of the forms
// find.go finds, replaced by Redacted: an error's text, say.
func RedactText(s string, secrets ...string) string {
	return newFinder(secrets).hide(s)
}

// withoutUser is rest, a URL without its query and fragment, without the
// user credentials of its authority (up to its last '@', as url.Parse
// reads it).
func withoutUser(rest string) string {
	i := strings.Index(rest, "//")
	if i < 0 {
		return rest
	}
	auth := rest[i+2:]
	if j := strings.IndexByte(auth, '/'); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return rest
	}
	return rest[:i+2] + rest[i+2+at+1:]
}

// redactPairs is a raw query (or fragment) with the value of each
// parameter that marks or holds a secret Redacted, all else as it was.
func redactPairs(q string, f *finder) string {
	var b strings.Builder
	for q != "" {
		n := strings.IndexAny(q, "&;")
		if n < 0 {
			n = len(q)
		}
		b.WriteString(redactPair(q[:n], f))
		if n < len(q) {
			b.WriteByte(q[n])
			n++
		}
		q = q[n:]
	}
	return b.String()
}

// redactPair is one raw key=value of a query, its value Redacted when its
// key, as written or decoded, marks a secret, or its value holds one.
func redactPair(p string, f *finder) string {
	k, v, ok := strings.Cut(p, "=")
	if !ok {
		return p
	}
	dk, err := url.QueryUnescape(k)
	if err != nil {
		dk = k
	}
	if secretName(k) || secretName(dk) || f.holds(v) {
		return k + "=" + Redacted
	}
	return p
}

// SecretValues are the values of the guard's secrets, and the parts of
// them that are the secret proper, for Redact.
func (g *Guard) SecretValues() []string {
	out := make([]string, 0, len(g.secrets))
	for _, s := range g.secrets {
		out = append(out, s.value)
		out = append(out, s.hide...)
	}
	return out
}
