package netguard

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// Regression: an HTTP/2 server that reset a request's stream (RST_STREAM)
// had the tool told net/http's words: "stream error: stream ID 3;
// INTERNAL_ERROR; received from peer", or, for PROTOCOL_ERROR and
// REFUSED_STREAM, advice on net/http's API ("define Request.GetBody"),
// reworded to say neither the code nor that a refused stream was not
// processed. The tool is told that the server reset the stream, with
// which code, that the request reached the remote side, and whether it
// may be sent again: with REFUSED_STREAM, which says the server did not
// process it, yes; with another code, if the remote side may take it
// twice. It was sent once, and counts as sent.
func TestHTTP2StreamResetSaysWhatTheServerDid(t *testing.T) {
	const mayHaveActed = "the request reached the remote side, which may have acted on it; it was not sent again: send it again, as a request of its own, if the remote side may take it twice"
	for _, tc := range []struct {
		code uint32
		want string
	}{
		{0, "the server reset the request's HTTP/2 stream with code NO_ERROR (0x0) before it answered: " + mayHaveActed},
		{1, "the server reset the request's HTTP/2 stream with code PROTOCOL_ERROR (0x1) before it answered: " + mayHaveActed},
		{2, "the server reset the request's HTTP/2 stream with code INTERNAL_ERROR (0x2) before it answered: " + mayHaveActed},
		{7, "the server reset the request's HTTP/2 stream with code REFUSED_STREAM (0x7), which says it did not process the request (RFC 9113, section 8.7): it reached the server, which did not act on it; it was not sent again, and may be sent again"},
		{8, "the server reset the request's HTTP/2 stream with code CANCEL (0x8) before it answered: " + mayHaveActed},
		{11, "the server reset the request's HTTP/2 stream with code ENHANCE_YOUR_CALM (0xb) before it answered: " + mayHaveActed},
		{0xdead, "the server reset the request's HTTP/2 stream with code 0xdead (a code HTTP/2 does not define) before it answered: " + mayHaveActed},
	} {
		t.Run(h2Code(tc.code), func(t *testing.T) {
			addr, pool, seen := rawH2Server(t, rstStream(tc.code))
			g, err := New(Rules{Allow: []string{addr}, Methods: []string{"GET", "POST"}, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			trust(g, pool)
			for _, req := range []*sandbox.NetRequest{
				{Method: "POST", URL: "https://" + addr + "/order", Body: []byte("an order")},
				{Method: "POST", URL: "https://" + addr + "/order"},
				{Method: "GET", URL: "https://" + addr + "/order"},
			} {
				seen.Store(0)
				c := g.Call()
				_, err := c.RoundTrip(context.Background(), req)
				if err == nil || errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "no response: "+tc.want) {
					t.Errorf("%s of %d bytes: %v\nwant it sent, saying %q", req.Method, len(req.Body), err, tc.want)
				}
				if errors.Is(err, ErrNotProcessed) != (tc.code == refusedStream) {
					t.Errorf("%s of %d bytes: errors.Is(err, ErrNotProcessed) = %v with code %s", req.Method, len(req.Body), !(tc.code == refusedStream), h2Code(tc.code))
				}
				for _, word := range []string{"received from peer", "GetBody", "stream ID"} {
					if err != nil && strings.Contains(err.Error(), word) {
						t.Errorf("%s of %d bytes: the error says %q, net/http's words: %v", req.Method, len(req.Body), word, err)
					}
				}
				if n := seen.Load(); n != 1 || c.Sent != int64(len(req.Body)) {
					t.Errorf("%s of %d bytes: the server saw it %d times; %d bytes counted as sent", req.Method, len(req.Body), n, c.Sent)
				}
			}
		})
	}
}

// Regression: a server that reset the stream of an answer it had begun,
// before its body ended, had the tool told "read the response body:
// stream error: stream ID 1; INTERNAL_ERROR; received from peer". The
// tool is told, as for a body cut short, how far the body came, that the
// server reset the stream and with which code, and that the request
// reached the remote side, which answered.
func TestHTTP2StreamResetMidBodySaysHowFarItCame(t *testing.T) {
	addr, pool, _ := rawH2Server(t, func(frame func(byte, byte, uint32, []byte), stream uint32) {
		frame(1, 4, stream, []byte{0x88}) // HEADERS, END_HEADERS: :status 200
		frame(0, 0, stream, []byte("partial"))
		frame(3, 0, stream, []byte{0, 0, 0, 2}) // RST_STREAM INTERNAL_ERROR
	})
	g, err := New(Rules{Allow: []string{addr}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	trust(g, pool)
	_, err = g.Call().RoundTrip(context.Background(), get("https://"+addr+"/"))
	want := "read the response body: the server reset the response's HTTP/2 stream with code INTERNAL_ERROR (0x2) after 7 bytes of the body, before its end, so the body was cut short"
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "the request reached the remote side, which answered 200") || strings.Contains(err.Error(), "received from peer") {
		t.Fatalf("%v\nwant it to say %q", err, want)
	}
}

// Regression: a server that went away (GOAWAY) naming an earlier request
// as the last it processed had the tool told net/http's words ("http2:
// Transport received Server's graceful shutdown GOAWAY") and that the
// request may have reached the remote side: HTTP/2 says the server did
// not process it. The tool is told so, with the GOAWAY's code, and that
// it may be sent again; it was sent once.
func TestHTTP2GoAwaySaysTheRequestWasNotProcessed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer h2Answer
		code   string
	}{
		{"graceful", goAway, "NO_ERROR (0x0)"},
		{"with an error", func(frame func(byte, byte, uint32, []byte), _ uint32) {
			frame(7, 0, 0, []byte{0, 0, 0, 0, 0, 0, 0, 1}) // GOAWAY, last stream 0, PROTOCOL_ERROR
		}, "PROTOCOL_ERROR (0x1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, pool, seen := rawH2Server(t, tc.answer)
			g, err := New(Rules{Allow: []string{addr}, Methods: []string{"GET", "POST"}, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			trust(g, pool)
			want := "no response: the server went away (HTTP/2 GOAWAY, code " + tc.code + ") naming an earlier request as the last it processed, which says it did not process this one (RFC 9113, section 6.8): it reached the server, which did not act on it; it was not sent again, and may be sent again"
			for _, req := range []*sandbox.NetRequest{
				{Method: "POST", URL: "https://" + addr + "/order", Body: []byte("an order")},
				{Method: "GET", URL: "https://" + addr + "/order"},
			} {
				seen.Store(0)
				_, err := g.Call().RoundTrip(context.Background(), req)
				if err == nil || errors.Is(err, ErrNotSent) || err.Error() != want {
					t.Errorf("%s: %v\nwant %q", req.Method, err, want)
				}
				if !errors.Is(err, ErrNotProcessed) {
					t.Errorf("%s: the error is not ErrNotProcessed, so it is journaled as failed (as if the server may have acted on it): %v", req.Method, err)
				}
				if n := seen.Load(); n != 1 {
					t.Errorf("%s: the server saw it %d times", req.Method, n)
				}
			}
		})
	}
}
