package netguard

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Regression: a secret a server echoed base64-encoded (a request echoed
// as base64, a byte field of a JSON answer, a data: URL) was given to the
// tool, which had only to decode it. Its base64 forms are found as it
// is, alone or inside a longer text encoded, whichever byte of a group
// of three it begins at, in the standard and URL alphabets.
func TestSecretEchoedBase64NotGivenToTool(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		tok := strings.TrimPrefix(auth, "Bearer ")
		w.Header().Set("X-Echo", b64([]byte(tok)))
		w.Header().Set("Location", "/next?state="+url.QueryEscape(b64([]byte("{\"auth\":\""+auth+"\"}"))))
		io.WriteString(w, b64([]byte("GET / HTTP/1.1\r\nAuthorization: "+auth+"\r\n\r\n"))+"\n")
		io.WriteString(w, base64.RawURLEncoding.EncodeToString([]byte("x"+tok+"y"))+"\n")
		io.WriteString(w, b64([]byte("xy"+tok))+"\n")
	})
	c := echoGuard(t, s)
	resp, err := c.RoundTrip(context.Background(), get(s.URL))
	if err != nil {
		t.Fatal(err)
	}
	if holdsDecoded(t, resp.Header.Get("X-Echo")) || resp.Header.Get("X-Echo") != Redacted {
		t.Errorf("X-Echo %q", resp.Header.Get("X-Echo"))
	}
	state, _ := url.QueryUnescape(strings.TrimPrefix(resp.Header.Get("Location"), "/next?state="))
	if holdsDecoded(t, state) {
		t.Errorf("Location %q", resp.Header.Get("Location"))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(resp.Body)), "\n") {
		if holdsDecoded(t, line) || !strings.Contains(line, Redacted) {
			t.Errorf("body line %q", line)
		}
	}
}

// holdsDecoded reports whether any part of s between Redacted, decoded
// from base64 at any of the offsets it may begin at, holds echoToken.
func holdsDecoded(t *testing.T, s string) bool {
	t.Helper()
	for _, part := range strings.Split(s, Redacted) {
		for i := 0; i < 4 && i < len(part); i++ {
			p := strings.NewReplacer("-", "+", "_", "/").Replace(strings.TrimRight(part[i:], "="))
			p = p[:len(p)/4*4]
			d, _ := base64.StdEncoding.DecodeString(p)
			if strings.Contains(strings.ToLower(string(d)), strings.ToLower(echoToken)) {
				return true
			}
		}
	}
	return false
}

// Regression: a secret set as Basic credentials (base64 of
// user:password) was hidden only as that base64; a server that echoed
// the credentials decoded, or the password alone, gave them to the tool.
// The user name alone is not a secret, and is left alone; but for a user
// name with no password after it, which is then the key itself.
func TestSecretEchoedAsBasicCredentialsNotGivenToTool(t *testing.T) {
	const pass = "pa55-W0rd-7f3a"
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		user, pw, _ := r.BasicAuth()
		w.Header().Set("X-Password", strings.ToUpper(pw))
		io.WriteString(w, "hello "+user+", you sent "+user+":"+pw)
	})
	for _, tc := range []struct{ creds, want string }{
		{"alice:" + pass, "hello alice, you sent [redacted]"},
		{"sk_test_4eC39HqLyjWDarjtT1zdp7dc:", "hello [redacted], you sent [redacted]"},
	} {
		creds := base64.StdEncoding.EncodeToString([]byte(tc.creds))
		c := guard(t, Rules{Allow: []string{s.hostPort()},
			Secrets: []Secret{{Host: s.hostPort(), Header: "Authorization", Value: "Basic " + creds, Hide: []string{creds}}}})
		resp, err := c.RoundTrip(context.Background(), get(s.URL))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(resp.Body); got != tc.want || strings.Contains(resp.Header.Get("X-Password"), "W0RD") {
			t.Errorf("%s: the tool is given %q, X-Password %q; want %q", tc.creds, got, resp.Header.Get("X-Password"), tc.want)
		}
	}
}

// Basic credentials that are not base64 of user:password (written as
// "Basic ${USER}:${PASS}", which the host does not encode) are refused
// when the grant is read, saying how to write them, rather than sent
// for the server to refuse and hidden as what they are not.
func TestBasicSecretNotOfUserAndPasswordRefused(t *testing.T) {
	for _, v := range []string{"Basic alice:s3cret", "basic !!!", "Basic " + base64.StdEncoding.EncodeToString([]byte("no colon"))} {
		_, err := New(Rules{Allow: []string{"api.test"}, Secrets: []Secret{{Host: "api.test", Header: "Authorization", Value: v}}})
		if !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), "base64 of user:password") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v", v, err)
		}
	}
}
