package web

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a stream that followed a run wrote nothing while the run
// wrote no event (a model's answer that takes minutes, a long tool
// call), and a proxy in front closes a connection silent that long
// (nginx after 60 seconds): the browser behind it lost the stream and
// reconnected, over and over. A stream that has gone keepAlive without a
// write now sends a comment line, which an EventSource ignores.
func TestQuietStreamSendsKeepAliveComments(t *testing.T) {
	defer func(d time.Duration) { keepAlive = d }(keepAlive)
	keepAlive = 50 * time.Millisecond
	f := newFixture(t, Config{Loopback: true})
	f.withHistory("held", checkpoint.StatusRunning, `{"type":"run_start","agent":"held","run":"r1"}`+"\n")
	lock, err := f.store.Lock("held", checkpoint.ThisProcess("another process's run"))
	must(t, err)
	defer lock.Unlock()
	resp, err := http.Get(f.http.URL + "/api/agents/held/events?follow=1")
	must(t, err)
	defer resp.Body.Close()
	comments := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), ":") {
				comments <- sc.Text()
				return
			}
		}
	}()
	select {
	case c := <-comments:
		t.Logf("the quiet stream sent %q", c)
	case <-time.After(10 * time.Second):
		t.Fatal("a stream that followed a quiet run sent no comment in 10 s, 200 times keepAlive")
	}
}
