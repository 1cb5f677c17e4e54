package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox"
)

// fullBacklog is the address of a listener on loopback that never
// accepts, whose backlog is full: a connect to it is never completed (the
// kernel drops its SYN), as a connect to a blackholed address is not.
// That a full backlog drops a SYN, where another system may refuse the
// connection, is Linux's way: so the file's name.
func fullBacklog(t *testing.T) string {
	t.Helper()
	port, err := fullBacklogAt(t, [4]byte{127, 0, 0, 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// fullBacklogAt makes such a listener at ip and port (0: one the kernel
// picks) and returns its port; the error is the bind's.
func fullBacklogAt(t *testing.T, ip [4]byte, port int) (int, error) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: ip, Port: port}); err != nil {
		return 0, fmt.Errorf("bind %v:%d: %w", net.IP(ip[:]), port, err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port = sa.(*syscall.SockaddrInet4).Port
	addr := fmt.Sprintf("%v:%d", net.IP(ip[:]), port)
	// Fill the backlog (a backlog of 0 holds one connection).
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return port, nil
		}
		t.Cleanup(func() { c.Close() })
	}
}

// Regression: a peer that never completes the TCP connect (a blackholed
// address, a listener whose backlog is full) was untested. The request
// ends with the grant's timeout, not sent, its error saying that no
// connection was made within it; and where one connection attempt has a
// bound of its own, shorter than the grant's timeout (so that a name's
// next address is tried), its error names that bound and what it means,
// where it said "i/o timeout" alone.
func TestConnectNeverCompletedEndsWithAClearError(t *testing.T) {
	addr := fullBacklog(t)
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		attempt time.Duration
		want    string
	}{
		{"the grant's timeout", time.Second, time.Hour, "no connection within 1s (net: {timeout})"},
		{"an attempt's bound", time.Hour, time.Second, "connect to " + addr + ": not completed within 1s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, scheme := range []string{"http", "https"} {
				g, err := New(Rules{Allow: []string{addr}, Methods: []string{"POST"}, Timeout: tt.timeout})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				g.connectAttempt = tt.attempt
				c := g.Call()
				_, err = c.RoundTrip(context.Background(), &sandbox.NetRequest{Method: "POST", URL: scheme + "://" + addr + "/", Body: []byte("x")})
				if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), tt.want) || c.Sent != 0 {
					t.Errorf("%s: %v (sent %d), want not sent, saying %q", scheme, err, c.Sent, tt.want)
				}
			}
		})
	}
}
