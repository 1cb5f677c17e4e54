package netguard

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Regression: a secret a server echoed in a response's body was given to
// the tool as it came (and kept in the store as the tool's response): a
// server that echoes the request, or an error page that quotes its
// Authorization header, handed the tool the key the host had kept from
// it. The body is searched as the headers are, whole, after it is read,
// so a secret split across the chunks it came in is found too.
func TestSecretEchoedInBodyNotGivenToTool(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if r.URL.Path == "/whole" {
			io.WriteString(w, "you sent "+strings.ToUpper(tok)+".")
			return
		}
		w.Header().Set("Trailer", "X-Echo")
		fl := w.(http.Flusher)
		for _, part := range []string{"{\"auth\": \"Bearer " + tok[:5], tok[5:] + "\", \"lower\": \"" + strings.ToLower(tok[:9]),
			tok[9:] + "\", \"query\": \"" + url.QueryEscape("Bearer " + tok)[:10], url.QueryEscape("Bearer " + tok)[10:] + "\"}"} {
			io.WriteString(w, part)
			fl.Flush()
			time.Sleep(5 * time.Millisecond)
		}
		w.Header().Set("X-Echo", tok)
	})
	c := echoGuard(t, s)
	resp, err := c.RoundTrip(context.Background(), get(s.URL+"/chunks"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"auth": "[redacted]", "lower": "[redacted]", "query": "[redacted]"}`
	if got := string(resp.Body); got != want || holdsToken(resp.Header) {
		t.Errorf("the tool is given %q, %v; want %q", got, resp.Header, want)
	}
	resp, err = c.RoundTrip(context.Background(), get(s.URL+"/whole"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.Body); got != "you sent [redacted]." || resp.Header.Get("Content-Length") != strconv.Itoa(len(got)) {
		t.Errorf("the tool is given %q, Content-Length %s", got, resp.Header.Get("Content-Length"))
	}
}

// A body that hiding makes too large for the tool (a short secret echoed
// over and over, each replaced by the longer Redacted) is an error that
// says so, not a message the sandbox cannot encode.
func TestBodyTooLargeOnceSecretsHiddenIsAnError(t *testing.T) {
	const short = "s3cr3t!x"
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat(short+" ", MaxResponseLimit/(len(short)+1)))
	})
	c := guard(t, Rules{Allow: []string{s.hostPort()}, MaxResponseBytes: MaxResponseLimit,
		Secrets: []Secret{{Host: s.hostPort(), Header: "X-Key", Value: short, Hide: []string{short}}}})
	resp, err := c.RoundTrip(context.Background(), get(s.URL))
	if err == nil || !strings.Contains(err.Error(), "more than the 15728640 a tool can be given") || strings.Contains(err.Error(), short) {
		t.Fatalf("got %v, %d bytes", err, len(resp.Body))
	}
}
