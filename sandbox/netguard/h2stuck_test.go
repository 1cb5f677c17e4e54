package netguard

import (
	"context"
	"encoding/binary"
	"net/http"
	"strings"
	"testing"
	"time"
)

// windowPastMax is a WINDOW_UPDATE of a stream that takes its window past
// the largest HTTP/2 allows (2^31-1): sent twice, the second does, from
// any window.
func windowPastMax(frame func(byte, byte, uint32, []byte), stream uint32) {
	frame(8, 0, stream, binary.BigEndian.AppendUint32(nil, 1<<31-1))
	frame(8, 0, stream, binary.BigEndian.AppendUint32(nil, 1<<31-1))
}

// Regression: an HTTP/2 server that sent a WINDOW_UPDATE taking a
// stream's window past the largest HTTP/2 allows stopped net/http's
// HTTP/2 client for good (it locks the connection, and locks it again to
// reset the stream), and with it the request, past the grant's timeout
// and its call's own, the call, and the guard's Close: a server a grant
// allows could hold the agent for ever. The request ends with its time
// limit, or its cancellation, saying so (and, where net/http held the
// request, that it and its connection were left); the guard closes; and
// its next request, to that server or another, goes on a connection of
// its own.
func TestHTTP2ServerThatStopsTheClientDoesNotHoldTheRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer h2Answer
		left   bool // net/http holds the request, not only its body
	}{
		{"before its answer", windowPastMax, true},
		{"in its answer's body", func(frame func(byte, byte, uint32, []byte), stream uint32) {
			frame(1, 4, stream, []byte{0x88}) // HEADERS, END_HEADERS: :status 200
			frame(0, 0, stream, []byte("partial"))
			windowPastMax(frame, stream)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, pool, seen := rawH2Server(t, tc.answer)
			good := newH2Server(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
			pool.AddCert(good.Certificate())
			g, err := New(Rules{Allow: []string{addr, good.tlsHostPort()}, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			trust(g, pool)
			_, err = g.Call().RoundTrip(context.Background(), get("https://"+addr+"/"))
			if err == nil || !strings.Contains(err.Error(), "within 1s (net: {timeout})") ||
				tc.left && !strings.Contains(err.Error(), "the host's HTTP client did not end the request when told to") {
				t.Errorf("%v", err)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			go func() {
				for seen.Load() < 2 { // the server has the request, and answers it
					time.Sleep(time.Millisecond)
				}
				cancel(errCallStopped)
			}()
			_, err = g.Call().RoundTrip(ctx, get("https://"+addr+"/"))
			if err == nil || !strings.Contains(err.Error(), "cancelled") || !strings.Contains(err.Error(), errCallStopped.Error()) {
				t.Errorf("cancelled: %v", err)
			}
			resp, err := g.Call().RoundTrip(context.Background(), get(good.URL+"/"))
			if err != nil || string(resp.Body) != "ok" {
				t.Errorf("the next request: %+v, %v", resp, err)
			}
			g.Close()
		})
	}
}
