package netguard

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox"
)

// rawServer answers every request on a connection with answer, as it is.
func rawServer(t *testing.T, answer func(*http.Request) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(answer(req))); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// Regression: a response header whose value is not UTF-8 (a Latin-1
// Content-Disposition), which HTTP allows, was given to the tool as it
// came, in a message of the ABI whose text must be UTF-8: a tool read
// none of the response ("decode HTTP response: ... a text string that is
// not UTF-8"). Such a value is given as text, each byte the Latin-1
// character it is, after the secrets in it are hidden; an error that
// quotes such bytes is given as UTF-8 too.
func TestLatin1ResponseHeaderIsGivenAsText(t *testing.T) {
	addr := rawServer(t, func(r *http.Request) string {
		if r.URL.Path == "/bad" {
			return "HTTP/1.1 200 OK\r\nX\xe9: y\r\nContent-Length: 2\r\n\r\nok"
		}
		return "HTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename=\"caf\xe9.txt\"\r\nX-Echo: " + r.Header.Get("Authorization") + "; \xe9\r\nContent-Length: 2\r\n\r\nok"
	})
	g, err := New(Rules{Allow: []string{addr}, Secrets: []Secret{{Host: addr, Header: "Authorization", Value: "Bearer tøk-9f3c"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("Content-Disposition"); got != "attachment; filename=\"café.txt\"" {
		t.Errorf("Content-Disposition: %q", got)
	}
	if got := resp.Header.Get("X-Echo"); got != "[redacted]; é" {
		t.Errorf("X-Echo: %q", got)
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				t.Errorf("header %q: %q is not UTF-8", k, v)
			}
		}
	}
	b, err := abi.Marshal(abi.HTTPResponse{ABI: abi.Version, Status: resp.Status, Header: resp.Header, Body: resp.Body})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := abi.DecodeHTTPResponse(b); err != nil {
		t.Fatal(err)
	}
	_, err = g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/bad"})
	if err == nil || !utf8.ValidString(err.Error()) || !strings.Contains(err.Error(), "malformed MIME header") {
		t.Errorf("a malformed header line: %v", err)
	}
}
