package netguard

import (
	"net/http"
	"net/url"
	"slices"
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
// so is every value that holds one of the secret values given, as it is
// or percent-encoded (a Location header's query). A name that holds a
// secret value has it replaced by Redacted, in any case (hideInName).
func Redact(h map[string][]string, secrets ...string) map[string][]string {
	if len(h) == 0 {
		return nil
	}
	forms := secretForms(secrets)
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		k = hideInName(http.CanonicalHeaderKey(k), forms, secrets)
		for _, v := range vs {
			if secretName(k) || holdsSecret(v, forms, secrets) {
				v = Redacted
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// HideSecrets is a response's headers as the tool may be given them: each
// secret value given, as it is or percent-encoded, replaced by Redacted
// in every name and value, so that the tool never holds a secret a server
// echoes in its headers (a Location header, and so the URL the tool's
// client follows it to). A value that holds one in another encoding is
// Redacted whole. A name is a name in any case (net/http changes its
// case), so a secret in it is found in any case too. Unlike Redact, it
// leaves the values of headers whose names mark secrets alone: they are
// the tool's (a Set-Cookie the server sends).
func HideSecrets(h http.Header, secrets ...string) http.Header {
	forms := secretForms(secrets)
	if len(h) == 0 || len(forms) == 0 {
		return h
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		k = hideInName(k, forms, secrets)
		for _, v := range vs {
			if v = replaceForms(v, forms); holdsSecret(v, nil, secrets) {
				v = Redacted
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// hideInName is a header's name with each of forms in it, in any case,
// replaced by Redacted; a name that still holds a secret, in any case
// once percent-decoded, is Redacted whole.
func hideInName(k string, forms, secrets []string) string {
	for _, f := range longestFirst(forms) {
		k = replaceFold(k, f)
	}
	low := make([]string, len(secrets))
	for i, s := range secrets {
		low[i] = asciiLower(s)
	}
	for _, unescape := range []func(string) (string, error){func(s string) (string, error) { return s, nil }, url.PathUnescape, url.QueryUnescape} {
		if d, err := unescape(k); err == nil && containsAny(asciiLower(d), low) {
			return Redacted
		}
	}
	return k
}

// replaceFold is s with each occurrence of f, in any ASCII case, replaced
// by Redacted.
func replaceFold(s, f string) string {
	if f == "" {
		return s
	}
	lf := asciiLower(f)
	var b strings.Builder
	for {
		i := strings.Index(asciiLower(s), lf)
		if i < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString(Redacted)
		s = s[i+len(f):]
	}
	b.WriteString(s)
	return b.String()
}

// asciiLower is s with its ASCII letters in lower case, and so of the same
// length, byte for byte.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// RedactURL is raw as it may be recorded: the URL as the tool sent it,
// byte for byte, but for user credentials (dropped), the value of each
// query parameter whose name marks a secret (as for headers) or that
// holds a secret value, which is Redacted, and any secret value given,
// as it is or percent-encoded, replaced by Redacted. The query is not
// decoded and encoded again: its pairs keep their order and their text,
// those a decoder would drop (with a ';' or a bad '%' escape) included;
// a parameter is taken to end at '&' or ';'. A URL that does not read is
// recorded as Redacted alone; the grant refuses it, so it is not sent.
func RedactURL(raw string, secrets ...string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Redacted
	}
	forms := secretForms(secrets)
	rest, frag, hasFrag := strings.Cut(raw, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	if u.User != nil {
		rest = withoutUser(rest)
	}
	var b strings.Builder
	b.WriteString(rest)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(redactPairs(query, forms, secrets))
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(redactPairs(frag, forms, secrets))
	}
	s := replaceForms(b.String(), forms)
	if holdsSecret(s, nil, secrets) {
		return Redacted // a secret in an encoding of its own: the URL is not kept
	}
	return s
}

// RedactText is s with every secret value given, as it is or
// percent-encoded, replaced by Redacted: an error's text, say.
func RedactText(s string, secrets ...string) string {
	return replaceForms(s, secretForms(secrets))
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
func redactPairs(q string, forms, secrets []string) string {
	var b strings.Builder
	for q != "" {
		n := strings.IndexAny(q, "&;")
		if n < 0 {
			n = len(q)
		}
		b.WriteString(redactPair(q[:n], forms, secrets))
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
func redactPair(p string, forms, secrets []string) string {
	k, v, ok := strings.Cut(p, "=")
	if !ok {
		return p
	}
	dk, err := url.QueryUnescape(k)
	if err != nil {
		dk = k
	}
	if secretName(k) || secretName(dk) || holdsSecret(v, forms, secrets) {
		return k + "=" + Redacted
	}
	return p
}

// secretForms are the secret values given and their percent-encoded forms
// (url.QueryEscape's and url.PathEscape's), as a URL or a header that
// quotes one holds them.
func secretForms(secrets []string) []string {
	var out []string
	seen := map[string]bool{"": true}
	for _, s := range secrets {
		for _, f := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// holdsSecret reports whether v holds one of forms, or, percent-decoded,
// one of secrets.
func holdsSecret(v string, forms, secrets []string) bool {
	if containsAny(v, forms) {
		return true
	}
	if !strings.ContainsAny(v, "%+") {
		return false
	}
	for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
		if d, err := unescape(v); err == nil && containsAny(d, secrets) {
			return true
		}
	}
	return false
}

// replaceForms replaces each of forms in s by Redacted, longest first, so
// that no part of a longer one is left.
func replaceForms(s string, forms []string) string {
	for _, f := range longestFirst(forms) {
		s = strings.ReplaceAll(s, f, Redacted)
	}
	return s
}

// longestFirst is forms, the longest first.
func longestFirst(forms []string) []string {
	sorted := slices.Clone(forms)
	slices.SortStableFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	return sorted
}

func containsAny(v string, secrets []string) bool {
	for _, s := range secrets {
		if s != "" && strings.Contains(v, s) {
			return true
		}
	}
	return false
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
