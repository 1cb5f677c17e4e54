package model

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// keepsAliveAfter streams the first n events of a recording and then only
// keep-alive comments, one every 20 ms, until the client goes away.
func keepsAliveAfter(stream string, n int) step {
	return func(w http.ResponseWriter, r *http.Request) {
		sse(events(stream)[:n]...)(w, r)
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// A server that, before its answer or in the middle of it, sends nothing
// but keep-alive comments used to keep the run waiting for ever: each
// comment reset the bound on its silence. Comments carry nothing, so a
// stretch of them as long as the bound is silence too.
func TestServerThatOnlyKeepsAliveTimesOut(t *testing.T) {
	for _, fl := range flavours {
		stream := recording(t, fl.tools)
		for _, n := range []int{0, 3} {
			t.Run(fl.name+"/"+map[int]string{0: "before its answer", 3: "mid-stream"}[n], func(t *testing.T) {
				srv := serve(t, keepsAliveAfter(stream, n))
				p, rp := fl.open(srv.URL)
				fastRetries(rp, 2)
				e := endpointOf(p)
				e.wait, e.idle = time.Hour, 200*time.Millisecond
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_, err := p.Complete(ctx, hello)
				if ctx.Err() != nil {
					t.Fatalf("still waiting after 20 s: %v", err)
				}
				says := "the server sent only keep-alive comments for 0.2 s"
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), says) ||
					!strings.Contains(err.Error(), "model.timeout sets this bound") || !strings.Contains(err.Error(), "after 3 attempts") {
					t.Fatalf("err %v, want ErrUnavailable saying %q after 3 attempts", err, says)
				}
			})
		}
	}
}
