package mcp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// reportProgress tells a client that asked for progress (by sending a
// progress token) that the call has started, in the sandbox or on the MCP
// server server, and then, every ProgressEvery, how long it has run,
// until the returned stop is called. A call has no known total, so none
// is sent.
func (s *Server) reportProgress(ctx context.Context, req *sdk.CallToolRequest, name, server string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
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
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
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
	return func() {
		close(done)
		<-finished
	}
}
