package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// step is one answer of a fake server.
type step func(w http.ResponseWriter, r *http.Request)

// fakeServer answers the requests it gets with its steps in turn, the last
// one again and again, and keeps what it was sent.
type fakeServer struct {
	*httptest.Server
	mu      sync.Mutex
	steps   []step
	bodies  [][]byte
	headers []http.Header
	paths   []string
}

func serve(t *testing.T, steps ...step) *fakeServer {
	t.Helper()
	f := &fakeServer{steps: steps}
	f.Server = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies, f.headers = append(f.bodies, body), append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.URL.Path)
	s := f.steps[min(n, len(f.steps)-1)]
	f.mu.Unlock()
	s(w, r)
}

func (f *fakeServer) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fakeServer) body(i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

func recording(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// events splits a recording into its events, each with its blank line.
func events(s string) []string {
	parts := strings.SplitAfter(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// sse streams events, flushing after each, as a server does.
func sse(evs ...string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, e := range evs {
			_, _ = io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}
}

// sseCut streams the first n events and ends the response cleanly, as a
// proxy that gives up does.
func sseCut(stream string, n int) step { return sse(events(stream)[:n]...) }

// hangUp streams the first n events in a chunked body that never ends,
// and then drops the connection.
func hangUp(stream string, n int) step {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		body := strings.Join(events(stream)[:n], "")
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(buf, "%x\r\n%s\r\n", len(body), body)
		_ = buf.Flush()
	}
}

// status answers with a status, headers and a body.
func status(code int, body string, hdr ...string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// stall streams the first event and then sends nothing more until the
// client goes away.
func stall(stream string, started chan<- struct{}) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, events(stream)[0])
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
	}
}

// fastRetries makes p retry n times and record its waits instead of
// sleeping them.
func fastRetries(p *retryPolicy, n int) *[]time.Duration {
	var waits []time.Duration
	p.retries, p.base = n, time.Millisecond
	p.sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return ctx.Err()
	}
	return &waits
}

// hangs sends nothing, not even headers, until the client goes away.
func hangs(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// stallAfter streams the first n events of a recording and then sends
// nothing more until the client goes away.
func stallAfter(stream string, n int) step {
	return func(w http.ResponseWriter, r *http.Request) {
		sse(events(stream)[:n]...)(w, r)
		<-r.Context().Done()
	}
}

// endpointOf is the endpoint of a network provider, for tests to set its
// bounds.
func endpointOf(p Provider) *endpoint {
	switch p := p.(type) {
	case *OpenAI:
		return &p.endpoint
	case *Anthropic:
		return &p.endpoint
	}
	panic(fmt.Sprintf("%T has no endpoint", p))
}
