package netguard

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fullBacklogs are n loopback addresses (127.0.0.1, 127.0.0.2...) with
// one port, each a listener whose backlog is full (fullBacklogAt): a
// connect to any is never completed.
func fullBacklogs(t *testing.T, n int) (int, []netip.Addr) {
	t.Helper()
	for try := 0; ; try++ {
		port, err := fullBacklogAt(t, [4]byte{127, 0, 0, 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		addrs := []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
		for i := 2; i <= n && err == nil; i++ {
			a := [4]byte{127, 0, 0, byte(i)}
			if _, err = fullBacklogAt(t, a, port); err == nil {
				addrs = append(addrs, netip.AddrFrom4(a))
			}
		}
		if err == nil {
			return port, addrs
		}
		if try == 9 {
			t.Fatal(err) // the port is taken on another loopback address, ten times
		}
	}
}

// synSent is the set of addresses that sockets of this machine are
// connecting to on port, the connect not completed (SYN_SENT in
// /proc/net/tcp).
func synSent(port int) (map[netip.Addr]bool, error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[netip.Addr]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text()) // sl local_address rem_address st ...
		if len(fields) < 4 || fields[3] != "02" {
			continue
		}
		ip, p, _ := strings.Cut(fields[2], ":") // 0100007F:1F90, the address in the host's order
		b, err := hex.DecodeString(ip)
		if n, _ := strconv.ParseUint(p, 16, 16); err != nil || len(b) != 4 || int(n) != port {
			continue
		}
		out[netip.AddrFrom4([4]byte{b[3], b[2], b[1], b[0]})] = true
	}
	return out, sc.Err()
}

// dialing reports whether a goroutine of the process is in the guard's
// dial: net/http's, dialling on after the request ended.
func dialing() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), "netguard.(*Guard).dial")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Regression: the dial of a name with several addresses went on past
// the request's deadline, each address given its own attempt of up to
// min(10 s, the grant's timeout): net/http dials on, with neither the
// request's deadline nor its cancellation, when the request has ended,
// and a name whose addresses never complete the connect held sockets
// connecting for as many attempts as it had addresses. The whole dial
// ends by the request's deadline, the grant's timeout from its start:
// every attempt starts before it (and lasts its bound at least, so no
// more than timeout/attempt of them fit), and no socket is left. A
// request cancelled while its name resolves tries no address
// (TestCancelledRequestEndsItsConnectAtOnce).
func TestDialOfANameWithManyAddressesEndsByTheRequestsDeadline(t *testing.T) {
	const timeout, attempt = 600 * time.Millisecond, 200 * time.Millisecond
	fit := int((timeout + attempt - 1) / attempt) // the attempts begun before the deadline, at most
	port, addrs := fullBacklogs(t, 2*fit)
	local := "localhost:" + strconv.Itoa(port)
	for _, tc := range []struct {
		name   string
		cancel bool
		want   string
	}{
		{"the grant's timeout ends the request", false, "no connection within 600ms (net: {timeout})"},
		{"the call cancels the request", true, "cancelled while its connection was being made (context canceled)"},
	} {
		for _, scheme := range []string{"http", "https"} {
			t.Run(tc.name+", "+scheme, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				dns := resolverFunc(func(ctx context.Context, _, _ string) ([]netip.Addr, error) {
					if tc.cancel {
						cancel()     // net/http's dial goes on, without the request...
						<-ctx.Done() // ...but not without its cancellation
					}
					return addrs, nil
				})
				g, err := New(Rules{Allow: []string{local}, Methods: []string{"POST"}, Timeout: timeout, Resolver: dns})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				g.connectAttempt = attempt
				var (
					mu       sync.Mutex
					tried    = map[netip.Addr]bool{}
					watchErr error
				)
				returned, watched := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(watched)
					for {
						now, err := synSent(port)
						mu.Lock()
						for a := range now {
							tried[a] = true
						}
						watchErr = err
						mu.Unlock()
						if err != nil {
							return
						}
						select {
						case <-returned:
							if !dialing() {
								return // net/http's dial for the request has ended too
							}
						default:
						}
						time.Sleep(time.Millisecond)
					}
				}()
				_, err = g.Call().RoundTrip(ctx, post(scheme+"://"+local+"/order"))
				close(returned)
				if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%v, want not sent, saying %q", err, tc.want)
				}
				<-watched // the dial has ended
				mu.Lock()
				defer mu.Unlock()
				if watchErr != nil {
					t.Fatal(watchErr)
				}
				if tc.cancel {
					if len(tried) > 0 {
						t.Errorf("tried to connect to %v after the request was cancelled", tried)
					}
					return
				}
				if !tried[addrs[0]] {
					t.Fatalf("saw no connect to %s, the first address: /proc/net/tcp does not show it", addrs[0])
				}
				var late []string
				for _, a := range addrs[fit:] {
					if tried[a] {
						late = append(late, a.String())
					}
				}
				if len(late) > 0 {
					t.Errorf("tried to connect to %s after the request's deadline (of %v, %v an attempt: %d attempts fit)", strings.Join(late, ", "), timeout, attempt, fit)
				}
				if left, err := synSent(port); err != nil || len(left) > 0 {
					t.Errorf("sockets still connecting to %v once the dial ended (%v)", left, err)
				}
			})
		}
	}
}

// resolverFunc is a Resolver of a function.
type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}
