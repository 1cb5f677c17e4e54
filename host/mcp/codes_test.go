package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// Regression: a call waiting for the one before it to finish was told it
// had "started in the sandbox". A queued call is told nothing until its
// turn; then it is told it started.
func TestQueuedCallIsNotToldItStarted(t *testing.T) {
	got := make(chan string, 100)
	f := serve(t, "", &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		if req.Params.ProgressToken == "queued" {
			got <- req.Params.Message
		}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "write_and_wait", Arguments: map[string]any{"path": "w.txt", "content": "w"}})
		first <- err
	}()
	waitForStaged(t, filepath.Join(f.store.Dir(), "agents", "m", "staging", "round-1", "mcp-1"), "w.txt")
	params := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"text": "a b"}}
	params.SetProgressToken("queued")
	second := make(chan error, 1)
	go func() { _, err := f.client.CallTool(context.Background(), params); second <- err }()
	select {
	case msg := <-got:
		t.Errorf("a call waiting for its turn was told %q", msg)
	case <-time.After(time.Second):
	}
	cancel()
	<-first
	must(t, <-second)
	select {
	case msg := <-got:
		if msg != "count started in the sandbox" {
			t.Errorf("the call's first progress once it had its turn: %q", msg)
		}
	case <-time.After(10 * time.Second):
		t.Error("the call was not told it started")
	}
}

// Regression: a resources/read of a URI that names no file of the
// workspace, or a file too large, and a call of a paused session, were
// answered with errors of code 0. They have codes: invalid params for
// what the client asked for, CodeSessionPaused for the session.
func TestHandlerErrorsHaveCodes(t *testing.T) {
	f := serve(t, "", nil)
	must(t, os.Mkdir(filepath.Join(f.ws, "dir"), 0o755))
	big, err := os.Create(filepath.Join(f.ws, "big.bin"))
	must(t, err)
	must(t, big.Truncate(MaxResourceSize+1))
	must(t, big.Close())
	prefix := "file://" + filepath.ToSlash(f.ws) + "/"
	for _, uri := range []string{prefix + "../outside.txt", prefix + "%2e%2e/x", prefix + "dir", prefix + "big.bin", prefix + "missing.txt"} {
		_, err := f.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
		if code := wireCode(err); code != jsonrpc.CodeInvalidParams {
			t.Errorf("read %s: code %d (%v), want %d", uri, code, err, jsonrpc.CodeInvalidParams)
		}
	}
	must(t, f.eng.Pause(context.Background(), "m"))
	_, err = f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	if code := wireCode(err); code != -32010 {
		t.Errorf("a call of a paused session: code %d (%v), want -32010", code, err)
	}
}

// Each failure of a call has its code; none is left with code 0.
func TestCallErrorCodes(t *testing.T) {
	for err, want := range map[error]int64{
		fmt.Errorf("%w after round 3: agent m takes no more calls here", host.ErrSessionPaused): CodeSessionPaused,
		fmt.Errorf("%w: round 4 of agent m: disk full", host.ErrSessionBroken):                  CodeSessionBroken,
		ErrServerClosed:  jsonrpc.CodeInternalError,
		context.Canceled: jsonrpc.CodeInternalError,
	} {
		if code := wireCode(callError(err)); code != want {
			t.Errorf("%v: code %d, want %d", err, code, want)
		}
	}
}

func wireCode(err error) int64 {
	var w *jsonrpc.Error
	if !errors.As(err, &w) {
		return 0
	}
	return w.Code
}
