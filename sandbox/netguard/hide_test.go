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

func echoGuard(t *testing.T, s *server) *Client {
	return guard(t, Rules{Allow: []string{s.hostPort()},
		Secrets: []Secret{{Host: s.hostPort(), Header: "Authorization", Value: "Bearer " + echoToken, Hide: []string{echoToken}}}})
}

// Regression: a secret a server echoed in a redirect's Location reached
// the tool: its client followed the redirect to a URL holding it, and the
// fetch tool answered with that URL, so the secret went into the call's
// result (the journal, cairn log, events, the model's context). The tool
// is given the response's headers with every secret value in them
// Redacted, names included; a header whose name marks a secret (a
// Set-Cookie) keeps its value, which is the tool's.
func TestSecretEchoedInHeadersNotGivenToTool(t *testing.T) {
	s := echoingServer(t)
	c := echoGuard(t, s)
	resp, err := c.RoundTrip(context.Background(), get(s.URL+"/start"))
	if err != nil {
		t.Fatal(err)
	}
	if holdsToken(resp.Header) {
		t.Errorf("the tool is given the secret: %v", resp.Header)
	}
	if got, want := resp.Header.Get("Location"), "/landing?v=[redacted]&w=[redacted]"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	if got := resp.Header["X-[redacted]"]; len(got) != 1 || got[0] != "1" {
		t.Errorf("the header named after the secret: %v", resp.Header)
	}
	if got := resp.Header.Get("Set-Cookie"); got != "session=abc" {
		t.Errorf("Set-Cookie %q", got)
	}
}

// The text of an error the tool is given holds no secret value, though
// net/http quotes what a server sent in it (a malformed status line that
// echoes one); the error is still the error it was.
func TestSecretEchoedInAMalformedAnswerNotGivenToTool(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r, err := http.ReadRequest(bufio.NewReader(c))
			if err == nil {
				// No space: net/http quotes the whole line.
				c.Write([]byte("HTTP/1.1-" + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + "\r\n\r\n"))
			}
			c.Close()
		}
	}()
	hp := l.Addr().String()
	c := guard(t, Rules{Allow: []string{hp}, Secrets: []Secret{{Host: hp, Header: "Authorization", Value: "Bearer " + echoToken, Hide: []string{echoToken}}}})
	_, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + hp + "/"})
	if err == nil || strings.Contains(err.Error(), echoToken) || !strings.Contains(err.Error(), Redacted) {
		t.Fatalf("got %v", err)
	}
}
