package netguard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// h2Answer is what a raw HTTP/2 server writes on conn when a request's
// HEADERS open stream; frame writes one frame.
type h2Answer func(frame func(typ, flags byte, stream uint32, p []byte), stream uint32)

// rstStream answers with RST_STREAM of code (1 PROTOCOL_ERROR, 7
// REFUSED_STREAM), as a server (or a proxy before it) may after the
// request has been acted on.
func rstStream(code uint32) h2Answer {
	return func(frame func(byte, byte, uint32, []byte), stream uint32) {
		frame(3, 0, stream, binary.BigEndian.AppendUint32(nil, code))
	}
}

// closeConn is a frame type no frame has: frame(closeConn, ...) closes
// the connection, as a server that leaves.
const closeConn = 0xff

// goAway answers with GOAWAY naming no stream as processed.
func goAway(frame func(byte, byte, uint32, []byte), _ uint32) {
	frame(7, 0, 0, make([]byte, 8))
}

// rawH2Server is an HTTP/2 server over TLS that counts each request's
// HEADERS and answers them by answer; pool trusts its certificate.
func rawH2Server(t *testing.T, answer h2Answer) (addr string, pool *x509.CertPool, seen *atomic.Int32) {
	t.Helper()
	cert := httptest.NewUnstartedServer(nil)
	cert.EnableHTTP2 = true
	cert.StartTLS() // for its certificate
	t.Cleanup(cert.Close)
	pool = x509.NewCertPool()
	pool.AddCert(cert.Certificate())
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: cert.TLS.Certificates, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	seen = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveRawH2(c, answer, seen)
		}
	}()
	return ln.Addr().String(), pool, seen
}

func serveRawH2(c net.Conn, answer h2Answer, seen *atomic.Int32) {
	defer c.Close()
	frame := func(typ, flags byte, stream uint32, p []byte) {
		if typ == closeConn {
			c.Close()
			return
		}
		h := []byte{byte(len(p) >> 16), byte(len(p) >> 8), byte(len(p)), typ, flags, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(h[5:], stream)
		c.Write(append(h, p...))
	}
	if _, err := io.ReadFull(c, make([]byte, 24)); err != nil {
		return
	}
	frame(4, 0, 0, nil) // SETTINGS
	for {
		h := make([]byte, 9)
		if _, err := io.ReadFull(c, h); err != nil {
			return
		}
		if _, err := io.ReadFull(c, make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))); err != nil {
			return
		}
		stream := binary.BigEndian.Uint32(h[5:]) & 0x7fffffff
		switch {
		case h[3] == 4 && h[4]&1 == 0:
			frame(4, 1, 0, nil) // SETTINGS ACK
		case h[3] == 1:
			seen.Add(1)
			answer(frame, stream)
		}
	}
}

// trust makes g's transports trust pool's certificates, keeping the
// protocols they offer.
func trust(g *Guard, pool *x509.CertPool) {
	for _, t := range []*http.Transport{g.transport, g.once} {
		if t.TLSClientConfig == nil {
			t.TLSClientConfig = &tls.Config{}
		}
		t.TLSClientConfig.RootCAs = pool
	}
}

// Regression: a POST, PUT or PATCH without a body went to net/http with
// no body, which its HTTP/2 transport sends again, on its own, when the
// server resets the stream (PROTOCOL_ERROR, REFUSED_STREAM) or goes
// away: the server saw it hundreds of times, the journal once.
func TestBodilessPostIsSentOnceOverHTTP2(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer h2Answer
	}{
		{"RST_STREAM PROTOCOL_ERROR", rstStream(1)},
		{"RST_STREAM REFUSED_STREAM", rstStream(7)},
		{"GOAWAY", goAway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, pool, seen := rawH2Server(t, tc.answer)
			g, err := New(Rules{Allow: []string{addr}, Methods: []string{"GET", "POST", "PUT", "PATCH", "TRACE"}, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			trust(g, pool)
			for _, req := range []*sandbox.NetRequest{
				{Method: "POST", URL: "https://" + addr + "/order"},
				{Method: "PUT", URL: "https://" + addr + "/order"},
				{Method: "PATCH", URL: "https://" + addr + "/order"},
				{Method: "POST", URL: "https://" + addr + "/order", Body: []byte("an order")},
				{Method: "GET", URL: "https://" + addr + "/order"},
				{Method: "TRACE", URL: "https://" + addr + "/order"},
				{Method: "POST", URL: "https://" + addr + "/order", Header: http.Header{"Idempotency-Key": {"k1"}}},
			} {
				seen.Store(0)
				_, err := g.Call().RoundTrip(context.Background(), req)
				if n := seen.Load(); err == nil || n != 1 || strings.Contains(err.Error(), "GetBody") {
					t.Errorf("%s with %d bytes of body: the server saw it %d times (%v)", req.Method, len(req.Body), n, err)
				}
			}
		})
	}
}

// Requests over HTTP/2 still go as they did, each once, with or without
// a body.
func TestHTTP2RequestsAreAnsweredOnce(t *testing.T) {
	var bodies atomic.Value
	s := newH2Server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies.Store(r.Method + " " + string(b))
		w.Write([]byte("ok"))
	})
	g, err := New(Rules{Allow: []string{s.tlsHostPort()}, Methods: []string{"GET", "POST", "PUT", "DELETE"}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	trust(g, pool)
	for _, req := range []*sandbox.NetRequest{
		{Method: "POST", URL: s.URL + "/order"},
		{Method: "POST", URL: s.URL + "/order", Body: []byte("an order")},
		{Method: "PUT", URL: s.URL + "/order", Header: http.Header{"Idempotency-Key": {"k1"}}},
		{Method: "GET", URL: s.URL + "/order"},
		{Method: "DELETE", URL: s.URL + "/order"},
	} {
		s.hits.Store(0)
		resp, err := g.Call().RoundTrip(context.Background(), req)
		if err != nil || resp.Status != 200 || string(resp.Body) != "ok" || s.hits.Load() != 1 || bodies.Load() != req.Method+" "+string(req.Body) {
			t.Errorf("%s %q: %+v, %v; the server saw it %d times, as %q", req.Method, req.Body, resp, err, s.hits.Load(), bodies.Load())
		}
	}
}
