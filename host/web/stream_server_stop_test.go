package web

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a follower of a run that another process holds, whose
// stream stopped because the server stopped (cairn serve ends its
// requests' context at Ctrl-C or SIGTERM), was sent "event: end" with no
// data, which says the run ended cleanly, while the run went on; a
// client that trusted it stopped following for good. The stream now
// closes without an end event, as a stream the network cut does, so that
// an EventSource reconnects and goes on from its Last-Event-ID once the
// server is back.
func TestStreamStoppedByTheServerSaysNoEnd(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.withHistory("held", checkpoint.StatusRunning, `{"type":"run_start","agent":"held","run":"r1"}`+"\n")
	lock, err := f.store.Lock("held", checkpoint.ThisProcess("another process's run"))
	must(t, err)
	defer lock.Unlock()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	hs := httptest.NewUnstartedServer(f.srv)
	hs.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	hs.Start()
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/api/agents/held/events?follow=1")
	must(t, err)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		must(t, err)
		if strings.Contains(line, `"run_start"`) {
			break
		}
	}
	stop() // the server stops; the run goes on
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the stream broke rather than closed: %v", err)
	}
	if strings.Contains(string(rest), "event: end") {
		t.Fatalf("the server stopped while the run goes on, and the stream said it ended:\n%s", rest)
	}
}
