package web

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: an event stream had no X-Accel-Buffering header, so nginx,
// the usual proxy in front of a server beyond loopback, buffered it and a
// browser behind it saw a run's events only in lumps; and a follower that
// had read every line already (a reconnecting EventSource's
// Last-Event-ID, an after= at the end) got no answer at all, not even
// its header, until the run wrote its next line. A stream is now sent
// with X-Accel-Buffering: no, Cache-Control: no-store, no-transform, and
// its header at once, before any line.
func TestEventStreamHeaderComesAtOnceUnbuffered(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.withHistory("held", checkpoint.StatusRunning, `{"type":"run_start","agent":"held","run":"r1"}`+"\n")
	lock, err := f.store.Lock("held", checkpoint.ThisProcess("another process's run"))
	must(t, err)
	defer lock.Unlock()
	for _, c := range []struct{ name, query, lastID string }{
		{"after=", "?follow=1&after=1", ""},
		{"Last-Event-ID", "?follow=1", "1"},
	} {
		req, err := http.NewRequest("GET", f.http.URL+"/api/agents/held/events"+c.query, nil)
		must(t, err)
		if c.lastID != "" {
			req.Header.Set("Last-Event-ID", c.lastID)
		}
		got := make(chan *http.Response, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				close(got)
				return
			}
			got <- resp
		}()
		var resp *http.Response
		select {
		case resp = <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no header 10 s after a follower that has read every line asked, while the run goes on", c.name)
		}
		if resp == nil {
			t.FailNow()
		}
		h := resp.Header
		if resp.StatusCode != http.StatusOK || h.Get("Content-Type") != "text/event-stream" ||
			h.Get("X-Accel-Buffering") != "no" || h.Get("Cache-Control") != "no-store, no-transform" {
			t.Errorf("%s: %s, Content-Type %q, X-Accel-Buffering %q, Cache-Control %q", c.name, resp.Status,
				h.Get("Content-Type"), h.Get("X-Accel-Buffering"), h.Get("Cache-Control"))
		}
		resp.Body.Close()
	}
	// A playback to its end, and a stream's HEAD, say the same.
	lock.Unlock()
	for _, method := range []string{"GET", "HEAD"} {
		req, err := http.NewRequest(method, f.http.URL+"/api/agents/held/events?follow=1", nil)
		must(t, err)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		if method == "GET" {
			sc := bufio.NewScanner(resp.Body)
			var all []string
			for sc.Scan() {
				all = append(all, sc.Text())
			}
			if !strings.Contains(strings.Join(all, "\n"), "event: end") {
				t.Errorf("GET: the stream did not end: %q", all)
			}
		}
		resp.Body.Close()
		if h := resp.Header; h.Get("X-Accel-Buffering") != "no" || h.Get("Cache-Control") != "no-store, no-transform" {
			t.Errorf("%s: X-Accel-Buffering %q, Cache-Control %q", method, h.Get("X-Accel-Buffering"), h.Get("Cache-Control"))
		}
	}
}
