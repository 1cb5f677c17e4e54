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
// so is every value that contains one of the secret values given.
func Redact(h map[string][]string, secrets ...string) map[string][]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		k = http.CanonicalHeaderKey(k)
		for _, v := range vs {
			if secretName(k) || containsAny(v, secrets) {
				v = Redacted
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// RedactURL is raw as it may be recorded: without user credentials, the
// value of each query parameter whose name marks a secret (as for
// headers) Redacted, and any secret value given replaced.
func RedactURL(raw string, secrets ...string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Redacted
	}
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i, v := range vs {
				if secretName(k) || containsAny(v, secrets) {
					vs[i] = Redacted
				}
			}
		}
		u.RawQuery = q.Encode()
	}
	s := u.String()
	for _, sec := range secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, Redacted)
		}
	}
	return s
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
