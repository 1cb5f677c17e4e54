package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: at SIGTERM, `cairn mcp --http` closed its clients'
// standalone SSE streams as soon as the answers to the calls in flight
// were written on the calls' own streams; the SDK's client, which fails
// its session once that stream ends, could fail the call before it read
// its answer ("one run in four under load"). A client that keeps its
// standalone stream, as clients do by default, gets the answer.
func TestMCPHTTPSignalAnswersWithStandaloneStream(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, store, _ := servedAgent(t, bin)
	cmd := exec.Command(bin, append(flags, "--http", "127.0.0.1:0")...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	url := serverURL(t, stderr)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: http.DefaultClient, MaxRetries: -1}, nil)
	must(t, err)
	errs := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "write_and_wait",
			Arguments: map[string]any{"path": "x.txt", "content": "staged"}})
		errs <- err
	}()
	staged := overlay.StagedFile(filepath.Join(store, "agents", "sess", "staging", "round-1", "mcp-1"), "x.txt")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(staged); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call staged nothing within a minute")
		}
	}
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-errs:
		if err == nil || !strings.Contains(err.Error(), "committed with the result") {
			t.Errorf("the call in flight at SIGTERM: %v, want its answer saying it was stopped and committed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer 30 s after SIGTERM")
	}
	cmd.Wait()
}
