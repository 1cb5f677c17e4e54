package netguard

import (
	"context"
	"errors"
	"net"
	"net/http/httptrace"
	"strconv"
	"strings"
	"testing"
	"time"
)

// errCallStopped is the cause a test's call is cancelled with, as the host
// cancels a call with the reason it was stopped.
var errCallStopped = errors.New("the MCP client cancelled the call")

// Regression: a request cancelled (its call stopped) while its connection
// was being made returned at once, but the connect went on without it,
// to the request's deadline: net/http dials on, for a request to come,
// with the request's values and not its cancellation. The connect ends
// with the request, ended by its cancellation and not by a deadline, no
// socket is left connecting, and the error says the request was cancelled
// while it connected and that nothing of it was sent.
func TestCancelledRequestEndsItsConnectAtOnce(t *testing.T) {
	addr := fullBacklog(t)
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			g, err := New(Rules{Allow: []string{addr}, Methods: []string{"POST"}, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			g.connectAttempt = time.Hour
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			connecting, connectDone := make(chan struct{}, 1), make(chan error, 1)
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
				ConnectStart: func(string, string) { connecting <- struct{}{} },
				ConnectDone:  func(_, _ string, err error) { connectDone <- err },
			})
			go func() {
				<-connecting
				for { // until the connect is under way: the kernel has sent its SYN
					if now, err := synSent(port); err != nil || len(now) > 0 {
						break
					}
					time.Sleep(time.Millisecond)
				}
				cancel(errCallStopped)
			}()
			c := g.Call()
			_, err = c.RoundTrip(ctx, post(scheme+"://"+addr+"/order"))
			if !errors.Is(err, ErrNotSent) || !strings.Contains(err.Error(), "cancelled while its connection was being made ("+errCallStopped.Error()+")") || c.Sent != 0 {
				t.Errorf("%v (sent %d), want not sent, saying it was cancelled while connecting, and why", err, c.Sent)
			}
			if err := <-connectDone; !errors.Is(err, context.Canceled) {
				t.Errorf("the connect ended with %v, not with the request's cancellation", err)
			}
			if left, err := synSent(port); err != nil || len(left) > 0 {
				t.Errorf("sockets still connecting to %v once the connect ended (%v)", left, err)
			}
		})
	}
}
