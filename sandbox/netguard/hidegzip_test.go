package netguard

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// Regression: a tool that asked for a compressed body (Accept-Encoding:
// gzip, as many HTTP clients do on their own) was given it as the server
// sent it, which the search for secrets could not read; a secret the
// server echoed in it reached the tool, which had only to decompress it.
// The host asks for the coding itself and decodes the body, so it is
// searched, and given, decoded.
func TestSecretEchoedInACompressedBodyNotGivenToTool(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		body := "you sent " + r.Header.Get("Authorization")
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			io.WriteString(w, body)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, body)
		zw.Close()
	})
	c := echoGuard(t, s)
	resp, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: s.URL,
		Header: map[string][]string{"Accept-Encoding": {"gzip, deflate"}}})
	if err != nil {
		t.Fatal(err)
	}
	body := resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(zr)
	}
	if string(body) != "you sent [redacted]" || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("the tool is given %q (Content-Encoding %q)", body, resp.Header.Get("Content-Encoding"))
	}
}

// A body that says it is gzip and is not is an error that says so.
//
// Regression: one shorter than gzip's header, or gzip cut short, was
// "read the response body: unexpected EOF", which said nothing of gzip:
// a tool (and the model reading its answer) took it for a connection cut.
func TestBadGzipBodyIsAnError(t *testing.T) {
	var whole bytes.Buffer
	zw := gzip.NewWriter(&whole)
	io.WriteString(zw, strings.Repeat("a gzip body cut short ", 100))
	zw.Close()
	for _, tc := range []struct{ name, body, says string }{
		{"not gzip", "not gzip at all, and ", "gzip: invalid header"},
		{"shorter than gzip's header", "hello", "unexpected EOF"},
		{"gzip cut short", whole.String()[:whole.Len()/2], "unexpected EOF"},
	} {
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, tc.body)
		})
		_, err := echoGuard(t, s).RoundTrip(context.Background(), get(s.URL))
		if err == nil || !strings.Contains(err.Error(), "read the response body: it says it is gzip (Content-Encoding: gzip) and it does not decode as gzip") ||
			!strings.HasSuffix(err.Error(), tc.says) {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

// A server that answers a request that carried a secret in a coding the
// host did not ask for, and so cannot search, is refused, saying so; one
// that carried none is given as it came.
func TestUnaskedContentEncodingRefusedWhenASecretWasSent(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br")
		io.WriteString(w, "\x1b\x03\x00\xf8"+r.Header.Get("Authorization"))
	})
	_, err := echoGuard(t, s).RoundTrip(context.Background(), get(s.URL))
	if err == nil || !strings.Contains(err.Error(), `Content-Encoding "br"`) || errors.Is(err, ErrNotSent) {
		t.Fatalf("with a secret: %v", err)
	}
	resp, err := guard(t, Rules{Allow: []string{s.hostPort()}}).RoundTrip(context.Background(), get(s.URL))
	if err != nil || resp.Header.Get("Content-Encoding") != "br" {
		t.Fatalf("without: %v, %v", resp, err)
	}
}
