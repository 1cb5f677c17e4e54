package netguard

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
)

// Regression: a secret was hidden from the tool as it is and
// percent-encoded, but in a header's value (and in an error's text) only
// in its own case: a server that echoed it upper- or lower-cased (a hex
// token, which case does not change, or one it folded) gave it to the
// tool. A secret is found in any ASCII case, in names, values and
// errors alike; only its own bytes are replaced, the rest of a value
// kept.
func TestSecretEchoedInAnotherCaseNotGivenToTool(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("X-Upper", "v="+strings.ToUpper(tok)+";")
		w.Header().Set("X-Lower", "v="+strings.ToLower(tok))
		w.Header().Set("Location", "/landing?v="+strings.ToLower(tok)+"&bearer="+strings.ToUpper("Bearer+"+tok))
		w.WriteHeader(http.StatusFound)
	})
	c := echoGuard(t, s)
	resp, err := c.RoundTrip(context.Background(), get(s.URL+"/start"))
	if err != nil {
		t.Fatal(err)
	}
	if holdsToken(resp.Header) {
		t.Errorf("the tool is given the secret: %v", resp.Header)
	}
	for name, want := range map[string]string{"X-Upper": "v=[redacted];", "X-Lower": "v=[redacted]", "Location": "/landing?v=[redacted]&bearer=[redacted]"} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}

	// A malformed status line that echoes it lower-cased: net/http quotes
	// the line in its error.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			if r, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
				conn.Write([]byte("HTTP/1.1-" + strings.ToLower(r.Header.Get("Authorization")) + "\r\n\r\n"))
			}
			conn.Close()
		}
	}()
	hp := l.Addr().String()
	c = guard(t, Rules{Allow: []string{hp}, Secrets: []Secret{{Host: hp, Header: "Authorization", Value: "Bearer " + echoToken, Hide: []string{echoToken}}}})
	_, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + hp + "/"})
	if err == nil || strings.Contains(strings.ToLower(err.Error()), strings.ToLower(echoToken)) || !strings.Contains(err.Error(), Redacted) {
		t.Fatalf("got %v", err)
	}
}
