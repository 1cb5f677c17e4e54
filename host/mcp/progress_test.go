package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: a call that started and ended before the progress reporter
// was scheduled was sometimes never told it started: the reporter waited
// on "started" and "stopped" in one select, and with both ready Go picks
// either. A call that started is always told so, before its answer.
func TestStartedProgressOfACallThatEndsAtOnce(t *testing.T) {
	ctx := context.Background()
	s := &Server{opts: Options{ProgressEvery: time.Hour}}
	srv := sdk.NewServer(&sdk.Implementation{Name: "cairn", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "quick", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			started, stop := s.reportProgress(ctx, req, "quick", "")
			started()
			stop()
			return &sdk.CallToolResult{}, nil
		})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	must(t, err)
	defer ss.Close()
	progress := make(chan string, 100)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params.ProgressToken.(string) + ": " + req.Params.Message
		}}).Connect(ctx, ct, nil)
	must(t, err)
	defer cs.Close()
	const calls = 40
	for i := range calls {
		params := &sdk.CallToolParams{Name: "quick", Arguments: map[string]any{}}
		params.SetProgressToken(string(rune('A' + i)))
		_, err := cs.CallTool(ctx, params)
		must(t, err)
	}
	told := map[string]bool{}
	for len(told) < calls {
		select {
		case msg := <-progress:
			told[msg] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d calls that started were told so", len(told), calls)
		}
	}
	for i := range calls {
		if want := string(rune('A'+i)) + ": quick started in the sandbox"; !told[want] {
			t.Errorf("no %q", want)
		}
	}
}
