package mcp

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// streamKeepAlive is how long a stream of events the server answers with
// (a POST's, or a client's standalone GET) goes without a write before a
// comment line is sent, which a client ignores.
var streamKeepAlive = 15 * time.Second

// keepStreamsAlive sends a comment line on each stream of events of next
// that has gone streamKeepAlive without a write: a call that runs for
// minutes with nothing to report, or a standalone stream with nothing to
// say, is silent otherwise, and a proxy in front that closes a connection
// silent for a while (nginx after 60 seconds) would cut it, stopping the
// call. The SDK writes each event whole in one write, so a comment never
// falls inside one.
func keepStreamsAlive(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		aw := &aliveWriter{ResponseWriter: w, last: time.Now()}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { aw.keepAlive(done) })
		defer wg.Wait()
		defer close(done)
		next.ServeHTTP(aw, r)
	})
}

// aliveWriter is the writer of an answer that, once it is a stream of
// events, keepAlive writes comment lines to; mu orders them with the
// SDK's writes and flushes.
type aliveWriter struct {
	http.ResponseWriter
	mu   sync.Mutex
	last time.Time // of the last write
}

func (a *aliveWriter) WriteHeader(code int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = time.Now()
	a.ResponseWriter.WriteHeader(code)
}

func (a *aliveWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = time.Now()
	return a.ResponseWriter.Write(p)
}

// FlushError is for http.ResponseController, which the SDK flushes events
// with.
func (a *aliveWriter) FlushError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return http.NewResponseController(a.ResponseWriter).Flush()
}

// Unwrap is for http.ResponseController's deadlines.
func (a *aliveWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// keepAlive writes a comment line each time the answer, a stream of
// events, has gone streamKeepAlive without a write, until done or a write
// fails. A stream whose status is not sent yet (a call with nothing to
// report before its result) is sent it with the first: the SDK sets a
// stream's headers once the request is taken, and answers nothing but
// the stream from then on.
func (a *aliveWriter) keepAlive(done <-chan struct{}) {
	tick := time.NewTicker(max(streamKeepAlive/2, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			if !a.comment() {
				return
			}
		}
	}
}

// comment writes a comment line if the answer is a stream of events that
// has gone streamKeepAlive without a write; false once writing failed.
func (a *aliveWriter) comment() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if time.Since(a.last) < streamKeepAlive || !strings.HasPrefix(a.Header().Get("Content-Type"), "text/event-stream") {
		return true
	}
	a.last = time.Now()
	if _, err := io.WriteString(a.ResponseWriter, ": keep-alive\n\n"); err != nil {
		return false
	}
	return http.NewResponseController(a.ResponseWriter).Flush() == nil
}
