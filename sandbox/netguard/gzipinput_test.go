package netguard

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// Regression: a gzip body that decodes to nothing however long it is (an
// endless run of empty gzip members) was read until the grant's timeout,
// as much as the server could send, since max_response_bytes bounded the
// decoded body only: the exchange ended "no response within 5s". What
// is read of a gzip body as it came is bounded too.
func TestGzipBodyThatDecodesToNothingIsBounded(t *testing.T) {
	var empty bytes.Buffer
	zw := gzip.NewWriter(&empty)
	zw.Close()
	members := bytes.Repeat(empty.Bytes(), 4096)
	addr, _ := hostileServer(t, func(c net.Conn, req *http.Request, gone <-chan struct{}) {
		fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n")
		for {
			if _, err := c.Write(members); err != nil {
				return
			}
		}
	})
	g, err := New(Rules{Allow: []string{addr}, Timeout: 5 * time.Second, MaxResponseBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c := g.Call()
	_, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "GET", URL: "http://" + addr + "/"})
	if err == nil || !strings.Contains(err.Error(), "(net: {max_response_bytes})") {
		t.Fatalf("%v", err)
	}
}
