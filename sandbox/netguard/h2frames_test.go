package netguard

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// oneBytePerFrame writes a body of n bytes, each in a DATA frame (and so
// a TLS record) of its own, and then ends the stream.
func oneBytePerFrame(frame func(byte, byte, uint32, []byte), stream uint32, n int) {
	for range n {
		frame(0, 0, stream, []byte{'x'})
	}
	frame(0, 1, stream, nil) // END_STREAM
}

// Regression: an HTTP/2 response of max_response_bytes sent one byte to a
// DATA frame, each a TLS record of its own (9 bytes of frame header and
// 22 of record for each byte of body), was ended at the bound on the
// connection (8 times max_response_bytes, plus 256 KiB), though its body
// was within its bound: that bound counted the body's bytes eight times
// over, where its framing takes four times that. It is served.
func TestHTTP2BodyOneBytePerFrameIsServed(t *testing.T) {
	const max = 16 << 10
	addr, pool, _ := rawH2Server(t, func(frame func(byte, byte, uint32, []byte), stream uint32) {
		frame(1, 4, stream, []byte{0x88}) // :status 200, END_HEADERS
		oneBytePerFrame(frame, stream, max)
	})
	g, err := New(Rules{Allow: []string{addr}, Timeout: time.Minute, MaxResponseBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	trust(g, pool)
	resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + addr + "/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Body) != max {
		t.Errorf("a body of %d bytes, want %d", len(resp.Body), max)
	}
}

// Regression: the bytes an HTTP/2 connection read were charged to the
// requests in flight on it in equal shares, so that a response that took
// its time (a stream of events) was charged half of each response that
// came beside it, and was ended, though every response was within its
// bound, once enough others had come and gone: here eight, each of
// max_response_bytes sent one byte to a frame, while the first waits
// half-way. A request is ended only when the connection read, during
// its life, more than the bounds of every request it shared the
// connection with, its own included.
func TestHTTP2WireBoundIsSharedByTheRequestsBeside(t *testing.T) {
	const max = 16 << 10
	half, rest := make(chan struct{}), make(chan struct{})
	var first sync.Once
	addr, pool, _ := rawH2Server(t, func(frame func(byte, byte, uint32, []byte), stream uint32) {
		frame(1, 4, stream, []byte{0x88}) // :status 200, END_HEADERS
		slow := false
		first.Do(func() { slow = true })
		if !slow {
			oneBytePerFrame(frame, stream, max)
			return
		}
		go func() {
			for range max / 2 {
				frame(0, 0, stream, []byte{'x'})
			}
			close(half)
			<-rest
			oneBytePerFrame(frame, stream, max/2)
		}()
	})
	g, err := New(Rules{Allow: []string{addr}, Timeout: time.Minute, MaxResponseBytes: max, MaxRequests: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	trust(g, pool)
	slowErr := make(chan error, 1)
	go func() {
		resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + addr + "/events"})
		if err == nil && len(resp.Body) != max {
			t.Errorf("the slow response: a body of %d bytes, want %d", len(resp.Body), max)
		}
		slowErr <- err
	}()
	<-half
	c := g.Call()
	for i := range 8 {
		resp, err := c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + addr + "/"})
		if err != nil || len(resp.Body) != max {
			t.Fatalf("request %d beside the slow one: %v", i, err)
		}
	}
	close(rest)
	if err := <-slowErr; err != nil {
		t.Errorf("the slow response beside the others: %v", err)
	}
}
