package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// Regression: a URL of any size was taken, and journaled whole when it
// was refused: a tool could fill a record past what the journal reads. A
// URL past MaxURLBytes is refused before anything else is checked, in an
// error that names the cap and does not quote it.
func TestURLPastCapRefusedBeforeAnythingElse(t *testing.T) {
	c := guard(t, Rules{Allow: []string{"api.test"}, MaxRequests: 1})
	huge := "http://api.test/" + strings.Repeat("a", 4<<20)
	for _, req := range []*sandbox.NetRequest{get(huge), {Method: "DELETE", URL: huge}} {
		err := c.Admit(req)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "8192") || strings.Contains(err.Error(), "method") || len(err.Error()) > 300 {
			t.Fatalf("%s of %d bytes: %.300v", req.Method, len(req.URL), err)
		}
	}
	if err := c.Admit(get("http://api.test/" + strings.Repeat("a", MaxURLBytes-len("http://api.test/")))); err != nil {
		t.Fatalf("a URL of MaxURLBytes: %v", err)
	}
}

// What the journal keeps of a request is bounded however large the
// request, and two requests clipped alike are the same request.
func TestRecordedRequestIsBounded(t *testing.T) {
	huge := "http://api.test/?q=" + strings.Repeat("a", 4<<20)
	u := RecordedURL(huge)
	if len(u) > 1024 || !strings.HasPrefix(u, "http://api.test/?q=aaa") || !strings.Contains(u, fmt.Sprintf("a URL of %d bytes, sha256:", len(huge))) {
		t.Fatalf("a URL of 4 MiB recorded as %.200q (%d bytes)", u, len(u))
	}
	if RecordedURL(huge+"b") == u || RecordedURL(huge) != u {
		t.Fatal("two URLs clipped alike")
	}
	exact := "http://api.test/" + strings.Repeat("a", MaxURLBytes-len("http://api.test/"))
	if RecordedURL(exact) != exact {
		t.Fatal("a URL of MaxURLBytes is clipped")
	}
	if m := RecordedMethod(strings.Repeat("G", 4<<20)); len(m) > 1024 {
		t.Fatalf("a method of 4 MiB recorded in %d bytes", len(m))
	}
	many := map[string][]string{}
	for i := range MaxHeaders + 1 {
		many[fmt.Sprintf("X-H%d", i)] = []string{"v"}
	}
	for name, h := range map[string]map[string][]string{
		"too many headers": many,
		"a value of 4 MiB": {"X-Big": {strings.Repeat("v", 4<<20)}},
	} {
		got := RecordedHeader(h)
		if v := got[HeadersNotRecorded]; len(got) != 1 || len(v) != 1 || len(v[0]) > 1024 || !strings.Contains(v[0], "sha256:") {
			t.Errorf("%s recorded as %.300v", name, got)
		}
	}
	if got := RecordedHeader(map[string][]string{"x-api-key": {"k"}, "Accept": {"a"}}); len(got) != 2 || got["X-Api-Key"][0] != Redacted {
		t.Errorf("headers within the bounds recorded as %v", got)
	}
	c := guard(t, Rules{Allow: []string{"api.test"}})
	for name, req := range map[string]*sandbox.NetRequest{
		"method":      {Method: strings.Repeat("G", 4<<20), URL: "http://api.test/"},
		"header name": {Method: "GET", URL: "http://api.test/", Header: map[string][]string{strings.Repeat("(", 4<<20): nil}},
	} {
		if err := c.Admit(req); !errors.Is(err, ErrRefused) || len(err.Error()) > 1024 {
			t.Errorf("a %s of 4 MiB: refused in %d bytes", name, len(err.Error()))
		}
	}
}

// Regression: RedactURL decoded the query and encoded it again, which
// reordered its pairs and dropped those with a ';' or a bad '%' escape
// ("?a=1&exfil;card=4111" was recorded as "?a=1"). A URL is recorded as
// sent, only its secrets replaced.
func TestRedactURLKeepsQueryAsSent(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"http://a.test/q?a=1&exfil;card=4111", "http://a.test/q?a=1&exfil;card=4111"},
		{"http://a.test/q?b=2&a=1&x=%zz&y=a+b%20c&&z", "http://a.test/q?b=2&a=1&x=%zz&y=a+b%20c&&z"},
		{"http://a.test/p%2Fq/r?", "http://a.test/p%2Fq/r?"},
		{"http://a.test/q?a=1&api_key=k&x;token=t&api%5Fkey=k2", "http://a.test/q?a=1&api_key=[redacted]&x;token=[redacted]&api%5Fkey=[redacted]"},
		{"https://u:p@a.test/q?a=1#access_token=t&b=2", "https://a.test/q?a=1#access_token=[redacted]&b=2"},
		{"https://u@p@a.test:8443/", "https://a.test:8443/"},
		{"http://a.test/q?x=tok123y", "http://a.test/q?x=[redacted]"},
		{"http://a.test/tok123/q", "http://a.test/[redacted]/q"},
		{"http://a.test/%zz", "[redacted]"},
	} {
		if got := RedactURL(tc.raw, "tok123"); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// Regression: secrets were redacted only as they are, so one holding '+',
// '/' or '=' went into the record where it appeared percent-encoded: in a
// query, a path, a Location header. Its encoded forms are redacted too.
func TestSecretRedactedWhenPercentEncoded(t *testing.T) {
	const secret = "tok+/=9f3c1e"
	q, p := url.QueryEscape(secret), url.PathEscape(secret)
	if got := RedactURL("http://a.test/k/"+p+"?code="+q+"&lower="+strings.ToLower(q), secret); got != "http://a.test/k/[redacted]?code=[redacted]&lower=[redacted]" {
		t.Errorf("URL redacted as %q", got)
	}
	h := Redact(map[string][]string{"Location": {"http://a.test/cb?code=" + q}, "Link": {"</k/" + p + ">"},
		"X-Lower": {"v=" + strings.ToLower(q)}, "Accept": {"text/plain"}}, "Bearer "+secret, secret)
	if h["Location"][0] != Redacted || h["Link"][0] != Redacted || h["X-Lower"][0] != Redacted || h["Accept"][0] != "text/plain" {
		t.Errorf("headers redacted as %v", h)
	}
	if got := RedactText(`Get "http://a.test/?c=`+q+`": EOF`, secret); strings.Contains(got, q) {
		t.Errorf("text redacted as %q", got)
	}
}

// Regression: max_response_bytes could be set past the ABI's 16 MiB
// message, and a response the tool could never be given was read (and
// journaled as received). Such a grant is refused, naming the field and
// the most it may be.
func TestGrantResponseCapAboveABIRefused(t *testing.T) {
	_, err := New(Rules{Allow: []string{"*"}, MaxResponseBytes: 50 << 20})
	if !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), "max_response_bytes") || !strings.Contains(err.Error(), fmt.Sprint(MaxResponseLimit)) {
		t.Fatalf("got %v", err)
	}
	s := newServer(t, hello)
	c := guard(t, Rules{Allow: []string{s.hostPort()}, MaxResponseBytes: MaxResponseLimit})
	if _, err := c.RoundTrip(context.Background(), get(s.URL)); err != nil {
		t.Fatalf("at MaxResponseLimit: %v", err)
	}
}

// Regression: max_request_bytes could be set past the ABI's 16 MiB
// message, which no request body past it can come through: the grant
// said a tool could send a body the host would never be given, and the
// tool learned it only from an error about the message. Such a grant is
// refused, naming the field and the most it may be.
func TestGrantRequestCapAboveABIRefused(t *testing.T) {
	_, err := New(Rules{Allow: []string{"*"}, MaxRequestBytes: 32 << 20})
	if !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), "max_request_bytes") || !strings.Contains(err.Error(), fmt.Sprint(MaxRequestLimit)) {
		t.Fatalf("got %v", err)
	}
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
	})
	c := guard(t, Rules{Allow: []string{s.hostPort()}, Methods: []string{"POST"}, MaxRequestBytes: MaxRequestLimit})
	resp, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: s.URL, Body: make([]byte, MaxRequestLimit)})
	if err != nil || string(resp.Body) != fmt.Sprint(MaxRequestLimit) {
		t.Fatalf("at MaxRequestLimit: %v", err)
	}
}
