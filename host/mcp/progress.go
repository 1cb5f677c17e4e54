package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// reportProgress tells a client that asked for progress (by sending a
// progress token) that the call has started, in the sandbox or on the MCP
// server server, once started is called (host.CallOptions.Started: the
// tool started, so a call denied or refused for its arguments is told
// nothing), and then, every ProgressEvery, how long it has run, until
// the returned stop is called. A call has no known total, so none is
// sent.
func (s *Server) reportProgress(ctx context.Context, req *sdk.CallToolRequest, name, server string) (started, stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil, func() {}
	}
	begun := make(chan struct{})
	started = sync.OnceFunc(func() { close(begun) })
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		select {
		case <-begun:
		case <-done:
			// A call that started and ended before this goroutine ran
			// finds both closed; it started, so it is told.
			select {
			case <-begun:
			default:
				return
			}
		case <-ctx.Done():
			return
		}
		start := time.Now()
		notify := func(msg string) {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token,
				Message: msg, Progress: time.Since(start).Seconds()})
		}
		if server == "" {
			notify(name + " started in the sandbox")
		} else {
			notify(name + " started on MCP server " + server + ", outside the sandbox")
		}
		tick := time.NewTicker(s.opts.ProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				notify(fmt.Sprintf("%s running for %s", name, time.Since(start).Round(time.Millisecond)))
			}
		}
	}()
	return started, func() {
		close(done)
		<-finished
	}
}
