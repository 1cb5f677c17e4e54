package web

import (
	"net/http"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a HEAD of the events route with ?follow=1 (curl -I, a link
// previewer) was answered with the stream's header and then followed the
// run for as long as it went on, writing nothing: the connection it came
// on answered no other request until the run ended. A HEAD is answered
// with the header and ends; only a GET follows.
func TestHeadOfAStreamDoesNotFollow(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.withHistory("held", checkpoint.StatusRunning, `{"type":"run_start","agent":"held","run":"r1"}`+"\n")
	lock, err := f.store.Lock("held", checkpoint.ThisProcess("another process's run"))
	must(t, err)
	defer lock.Unlock()
	// One connection, so the request after the HEAD goes on it.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	head, err := client.Head(f.http.URL + "/api/agents/held/events?follow=1")
	must(t, err)
	head.Body.Close()
	if head.StatusCode != http.StatusOK || head.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("HEAD: %s, %q", head.Status, head.Header.Get("Content-Type"))
	}
	next, err := client.Get(f.http.URL + "/api/info")
	if err != nil {
		t.Fatalf("the request after the HEAD, on its connection, while the run goes on: %v", err)
	}
	next.Body.Close()
}
