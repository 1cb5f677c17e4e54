package netguard

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// Regression: an HTTP/2 server that sent DATA frames without a byte of
// body, empty or of padding alone, held the request until the grant's
// timeout: max_response_bytes counted the body's bytes only. The wire
// under the response is bounded too, and the request ends at that bound.
func TestHTTP2FramesWithoutBodyEndAtTheWireBound(t *testing.T) {
	status200 := []byte{0x88} // HPACK: :status 200
	padding := append([]byte{255}, make([]byte, 255)...)
	for _, tc := range []struct {
		name    string
		payload []byte
		flags   byte
	}{
		{"empty DATA frames", nil, 0},
		{"DATA frames of padding alone", padding, 0x8}, // PADDED
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, pool, _ := rawH2Server(t, func(frame func(byte, byte, uint32, []byte), stream uint32) {
				frame(1, 4, stream, status200) // END_HEADERS
				for i := 0; i < 1<<16; i++ {
					frame(0, tc.flags, stream, tc.payload)
				}
			})
			// A timeout the bound ends the request well before, so
			// that one that ran out says the bound did not hold.
			g, err := New(Rules{Allow: []string{addr}, Timeout: 5 * time.Second, MaxResponseBytes: 1024})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			trust(g, pool)
			resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + addr + "/"})
			if err == nil {
				t.Fatalf("answered: %d %q", resp.Status, resp.Body)
			}
			want := "bytes on the connection for a body of at most 1024 bytes (net: {max_response_bytes})"
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
}

// A body of max_response_bytes in small DATA frames, each a TLS record of
// its own, is within the bound on the connection.
func TestHTTP2BodyInSmallFramesIsWithinTheWireBound(t *testing.T) {
	const max = 1 << 20
	addr, pool, _ := rawH2Server(t, func(frame func(byte, byte, uint32, []byte), stream uint32) {
		frame(1, 4, stream, []byte{0x88}) // :status 200, END_HEADERS
		for i := 0; i < max/16; i++ {
			frame(0, 0, stream, []byte("0123456789abcdef"))
		}
		frame(0, 1, stream, nil) // END_STREAM
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
