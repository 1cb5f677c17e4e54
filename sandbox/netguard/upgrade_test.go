package netguard

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// switchingServer is a loopback server that answers every request with
// "101 Switching Protocols" and Connection: Upgrade, then holds the
// connection open, sending nothing, until the test ends. It returns the
// server's host:port.
func switchingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n"))
				<-done
			}()
		}
	}()
	return l.Addr().String()
}

// within runs f and returns its result, or fails the test if f has not
// returned after d.
func within[T any](t *testing.T, d time.Duration, f func() T) T {
	t.Helper()
	ended := make(chan T, 1)
	go func() { ended <- f() }()
	select {
	case v := <-ended:
		return v
	case <-time.After(d):
		t.Fatalf("still running after %s", d)
		panic("unreachable")
	}
}

// Regression: a "101 Switching Protocols" answer (with Connection:
// Upgrade) to a request that never asked to upgrade hung the call past
// every limit: net/http handed back the connection itself as the body and
// stopped watching the request's context, and RoundTrip read it to its
// end, which never came. Such an answer is refused at once.
func TestSwitchingProtocolsUnaskedIsRefused(t *testing.T) {
	hp := switchingServer(t)
	c := guard(t, Rules{Allow: []string{hp}, Timeout: time.Minute})
	err := within(t, 10*time.Second, func() error {
		_, err := c.RoundTrip(context.Background(), get("http://"+hp+"/"))
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "101 Switching Protocols") || !strings.Contains(err.Error(), "did not ask to switch protocols") {
		t.Errorf("RoundTrip: %v", err)
	}
}

// Regression: a body read did not watch the request's context, so a body
// that net/http no longer watched (a protocol switch's: the connection
// itself) was read past the request's deadline and its call's end. A
// body read ends when the context does.
func TestBodyReadEndsWithTheContext(t *testing.T) {
	hp := switchingServer(t)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest("GET", "http://"+hp+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("RoundTrip: %+v, %v", resp, err)
	}
	defer resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = within(t, 10*time.Second, func() error {
		_, err := (&Guard{}).readBody(ctx, tr, resp.Body, 1<<20)
		return err
	})
	if err == nil {
		t.Error("a body read past its context's end did not fail")
	}
}

// Regression: a status line of three digits below 100 ("HTTP/1.1 099
// OK"), which net/http takes, was refused as an unasked protocol switch:
// the tool was told of a switch the server never answered; and one past
// 599 was given to the tool as a status. Both are refused as the status
// they are, no HTTP status.
func TestStatusOutsideHTTPsRangeIsRefusedAsNoStatus(t *testing.T) {
	for line, want := range map[string]string{"HTTP/1.1 099 OK": "status 99", "HTTP/1.1 000 x": "status 0", "HTTP/1.1 999 x": "status 999"} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				c.Write([]byte(line + "\r\nContent-Length: 0\r\n\r\n"))
			}
		}()
		hp := l.Addr().String()
		_, err = guard(t, Rules{Allow: []string{hp}}).RoundTrip(context.Background(), get("http://"+hp+"/"))
		if err == nil || strings.Contains(err.Error(), "switch") || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "100 to 599") {
			t.Errorf("%s: %v", line, err)
		}
	}
}
