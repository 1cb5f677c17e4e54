package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host/mcp"
)

// Regression: a `cairn mcp` whose agent `cairn pause` paused went on
// running, holding stdio or its port and refusing every call, until it
// was killed. Once paused it answers what it was asked, then exits with
// the paused exit code, 3, saying what goes on.
func TestMCPPausedSessionExits(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		t.Run(map[bool]string{false: "stdio", true: "http"}[overHTTP], func(t *testing.T) {
			t.Parallel()
			pausedSessionExits(t, overHTTP)
		})
	}
}

func pausedSessionExits(t *testing.T, overHTTP bool) {
	bin := cairnBinary(t)
	flags, store, _ := servedAgent(t, bin)
	var stderr bytes.Buffer
	var cs *sdk.ClientSession
	var err error
	client := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil)
	if overHTTP {
		cmd := exec.Command(bin, append(flags, "--http", "127.0.0.1:0")...)
		pipe, perr := cmd.StderrPipe()
		must(t, perr)
		must(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill() })
		url := serverURL(t, pipe)
		cs, err = client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: http.DefaultClient, MaxRetries: -1}, nil)
		must(t, err)
		defer cs.Close()
		pauseAndExpectExit(t, bin, store, cmd, cs, nil)
		return
	}
	cmd := exec.Command(bin, flags...)
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	cs, err = client.Connect(context.Background(), &sdk.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		cmd.Wait()
		t.Fatalf("connect: %v; stderr:\n%s", err, &stderr)
	}
	pauseAndExpectExit(t, bin, store, cmd, cs, &stderr)
}

// pauseAndExpectExit makes a call, pauses the agent, and checks that the
// next call is refused as paused and that cairn then exits with 3.
func pauseAndExpectExit(t *testing.T, bin, store string, cmd *exec.Cmd, cs *sdk.ClientSession, stderr *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "pause", "--store", store, "sess").CombinedOutput(); err != nil {
		t.Fatalf("cairn pause: %v\n%s", err, out)
	}
	// The session stops within a second of the pause even with no call
	// (host's TestSessionPausedWhileIdleStops), so a call after it is
	// refused as paused, or finds the server gone.
	_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if err == nil || errors.As(err, &rpc) && rpc.Code != mcp.CodeSessionPaused {
		t.Errorf("the call after the pause: %v, want code %d or the server gone", err, mcp.CodeSessionPaused)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("cairn mcp still runs 30 s after its agent paused")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitPaused {
		t.Errorf("exit %d, want %d", code, exitPaused)
	}
	if stderr != nil && !strings.Contains(stderr.String(), "cairn mcp --id sess") {
		t.Errorf("stderr says not what goes on:\n%s", stderr)
	}
}
