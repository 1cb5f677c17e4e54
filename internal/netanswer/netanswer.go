// Package netanswer makes the answers net/http writes itself, before any
// handler runs, speak a server's own error form: a server that answers
// JSON everywhere else (cairn serve's API, cairn mcp --http's JSON-RPC)
// answers a request net/http cannot read in the same JSON, with net/http's
// status and words and what to do. net/http offers no hook for these
// answers, so they are rewritten on their way out of the connection.
package netanswer

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Listener is ln whose connections answer the errors net/http answers
// itself before any handler runs, in plain text, with a JSON body of the
// server's own: a request line or header that does not parse (400, a
// malformed or missing Host among them), a header over
// http.Server.MaxHeaderBytes (431), a Transfer-Encoding other than chunked
// (501), an HTTP version other than 1.x (505), and an Expect other than
// 100-continue (417, which net/http answers with no body). Each keeps its
// status and closes its connection, as net/http does; its body is body
// of net/http's words and what to do, where docs says where the server's
// requests are described. A Server's answers pass through unchanged: they
// never have net/http's form (a status line followed at once by
// "Content-Type: text/plain; charset=utf-8" and "Connection: close" and
// no Date), and a JSON body holds no raw line end.
//
// A request that never sends its whole header within the server's
// ReadHeaderTimeout, or that is not HTTP at all (TLS, say), is closed
// without an answer by net/http; nothing can be made JSON there.
func Listener(ln net.Listener, docs string, body func(msg string) []byte) net.Listener {
	return listener{ln, form{docs, body}}
}

// form is how a server words an error: body, the JSON body of one saying
// msg; docs, where its requests are described.
type form struct {
	docs string
	body func(msg string) []byte
}

type listener struct {
	net.Listener
	form form
}

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonConn{Conn: c, form: l.form}, nil
}

// jsonConn is a connection whose writes of net/http's own errors are
// rewritten as JSON (see Listener).
type jsonConn struct {
	net.Conn
	form form
}

func (c *jsonConn) Write(p []byte) (int, error) {
	out, ok := c.form.netHTTPError(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite is for net/http, which half-closes a connection after a 431
// so that its client reads the answer before the connection ends.
func (c *jsonConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// plainError is the form of net/http's own error answers; expectFailed is
// that of its 417, written as an answer with no body.
var (
	plainError   = regexp.MustCompile(`^HTTP/1\.1 ([0-9]{3}) [^\r\n]*\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n`)
	expectFailed = regexp.MustCompile(`^HTTP/1\.1 417 Expectation Failed\r\nConnection: close\r\nDate: [^\r\n]*\r\nContent-Length: 0\r\n\r\n$`)
)

// netHTTPError is p, a write of net/http's own error answer, as JSON;
// false for any other write.
func (f form) netHTTPError(p []byte) ([]byte, bool) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		return nil, false
	}
	if expectFailed.Match(p) {
		return f.answer(http.StatusExpectationFailed, "the request's Expect header asks for what this server does not do (it knows 100-continue alone); send the request without it"), true
	}
	m := plainError.FindSubmatch(p)
	if m == nil {
		return nil, false
	}
	status, _ := strconv.Atoi(string(m[1]))
	text := string(p[len(m[0]):])
	return f.answer(status, text+"; "+f.advice(status, text)), true
}

// advice is what to do about net/http's error of status and text.
func (f form) advice(status int, text string) string {
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		return fmt.Sprintf("the request's header is over the %d bytes the server reads of one (a browser's cookies for this host count): send a smaller one", http.DefaultMaxHeaderBytes)
	case status == http.StatusNotImplemented:
		return "the request's Transfer-Encoding is not chunked, the one the server reads: send the body chunked, or with a Content-Length"
	case status == http.StatusHTTPVersionNotSupported:
		return "send the request over HTTP/1.1"
	case strings.Contains(text, "Host"):
		return "send one Host header, naming the server's host and port"
	}
	return "the request is no HTTP/1.1 request the server can read (" + f.docs + ")"
}

// answer is a whole answer of status with the server's error msg, that
// closes its connection.
func (f form) answer(status int, msg string) []byte {
	body := append(f.body(msg), '\n')
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}
