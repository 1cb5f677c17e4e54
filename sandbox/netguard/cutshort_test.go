package netguard

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Regression: a response whose body the server cut off before the end
// its Content-Length (or its chunked framing) promised was "read the
// response body: unexpected EOF", which said neither what happened nor
// what to do, and a gzip body cut off so was said to be no gzip. The
// error says that the server closed the connection (over HTTP/2, ended
// the response) after so many of the bytes promised, and that the
// request may be sent again; over HTTP/1.1 with and without a secret
// (whose answers the host reads itself first: framedConn) and over
// HTTP/2 alike.
func TestBodyCutShortSaysTheServerEndedItAndToSendAgain(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, strings.Repeat("a gzip body cut off by its server ", 100))
	zw.Close()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		says    string
	}{
		{"Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "12345")
		}, "after 5 of the 100 bytes the response promised (Content-Length: 100)"},
		{"gzip with a Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(gz.Len()))
			w.Write(gz.Bytes()[:gz.Len()/2])
		}, "after " + strconv.Itoa(gz.Len()/2) + " of the " + strconv.Itoa(gz.Len()) + " bytes the response promised"},
		{"chunked", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "12345")
			w.(http.Flusher).Flush()
			if r.ProtoMajor == 1 {
				panic(http.ErrAbortHandler) // the connection closed, the last chunk not sent
			}
		}, "after 5 bytes of the body, before the chunk that ends it (Transfer-Encoding: chunked)"},
		{"Content-Length of one byte", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1")
			w.(http.Flusher).Flush()
		}, "after 0 of the 1 byte the response promised (Content-Length: 1)"},
		{"chunked, one byte", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "1")
			w.(http.Flusher).Flush()
			if r.ProtoMajor == 1 {
				panic(http.ErrAbortHandler)
			}
		}, "after 1 byte of the body, before the chunk that ends it (Transfer-Encoding: chunked)"},
	} {
		for _, way := range []string{"HTTP/1.1", "HTTP/1.1 with a secret", "HTTP/2"} {
			if way == "HTTP/2" && strings.HasPrefix(tc.name, "chunked") {
				continue // HTTP/2 has no chunks: a response ends with its stream
			}
			t.Run(tc.name+", "+way, func(t *testing.T) {
				var (
					c   *Client
					url string
				)
				switch way {
				case "HTTP/1.1":
					s := newServer(t, tc.handler)
					c, url = guard(t, Rules{Allow: []string{s.hostPort()}}), s.URL
				case "HTTP/1.1 with a secret":
					s := newServer(t, tc.handler)
					c, url = echoGuard(t, s), s.URL
				case "HTTP/2":
					s := newH2Server(t, tc.handler)
					g, err := New(Rules{Allow: []string{s.tlsHostPort()}})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(g.Close)
					trustServer(g, s)
					c, url = g.Call(), s.URL
				}
				_, err := c.RoundTrip(context.Background(), get(url+"/"))
				who := "the server closed the connection "
				if way == "HTTP/2" {
					who = "the server ended the response (its stream or its connection) "
				}
				if err == nil || errors.Is(err, ErrNotSent) || !errors.Is(err, io.ErrUnexpectedEOF) ||
					!strings.Contains(err.Error(), "read the response body: "+who+tc.says) ||
					!strings.Contains(err.Error(), "send it again, as a request of its own") || strings.Contains(err.Error(), "gzip (") {
					t.Errorf("%v\nwant it to say %q and to send it again", err, who+tc.says)
				}
			})
		}
	}
}
