package netguard

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// An HTTP/2 server's tricks end alike: within the grant's bounds, with
// an error that holds no secret, even one the server sends back in its
// GOAWAY's debug data or a reset.
func TestHostileHTTP2Servers(t *testing.T) {
	status200 := []byte{0x88} // HPACK: :status 200, from the static table
	for _, tc := range []struct {
		name   string
		answer h2Answer
		want   string
	}{
		{"goes away quoting the secret", func(frame func(byte, byte, uint32, []byte), _ uint32) {
			p := binary.BigEndian.AppendUint32(nil, 0)
			p = binary.BigEndian.AppendUint32(p, 1) // PROTOCOL_ERROR
			frame(7, 0, 0, append(p, "echo: TOK-7E5D3C1B9A"...))
		}, "GOAWAY"},
		{"sends endless header blocks", func(frame func(byte, byte, uint32, []byte), stream uint32) {
			frame(1, 0, stream, status200) // HEADERS without END_HEADERS
			for i := 0; i < 4096; i++ {
				// a literal header, x: 4000 bytes, never ending its block
				frame(9, 0, stream, append([]byte{0x00, 0x01, 'x', 0x7f, 0xa1, 0x1e}, bytes.Repeat([]byte("a"), 4000)...))
			}
		}, "PROTOCOL_ERROR"},
		{"trickles its body", func(frame func(byte, byte, uint32, []byte), stream uint32) {
			frame(1, 4, stream, status200) // END_HEADERS
			for i := 0; i < 8; i++ {
				frame(0, 0, stream, []byte("t"))
				time.Sleep(time.Second / 4)
			}
		}, "the body did not come whole within 1s (net: {timeout})"},
		{"sends a body past the bound", func(frame func(byte, byte, uint32, []byte), stream uint32) {
			frame(1, 4, stream, status200)
			for i := 0; i < 4; i++ {
				frame(0, 0, stream, make([]byte, 16384))
			}
		}, "larger than 1024 bytes (net: {max_response_bytes})"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, pool, _ := rawH2Server(t, tc.answer)
			g, err := New(Rules{Allow: []string{addr}, Timeout: time.Second, MaxResponseBytes: 1024,
				Secrets: []Secret{{Host: addr, Header: "Authorization", Value: hostileToken, Hide: []string{"tok-7e5d3c1b9a"}}}})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			trust(g, pool)
			resp, err := g.Call().RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "https://" + addr + "/"})
			if err == nil {
				t.Fatalf("answered: %d %q", resp.Status, resp.Body)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(strings.ToLower(err.Error()), "tok-7e5d3c1b9a") {
				t.Errorf("the error holds the secret: %v", err)
			}
		})
	}
}
