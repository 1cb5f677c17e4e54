package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox/overlay"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: SIGTERM did not stop `cairn mcp --http` while a call ran:
// the process stayed until the call's time limit. The signal stops the
// call in flight, which is committed saying so, its change discarded, and
// the process exits at once.
func TestMCPHTTPSignalStopsCallInFlight(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, store, ws := servedAgent(t, bin)
	cmd := exec.Command(bin, append(flags, "--http", "127.0.0.1:0")...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	url := serverURL(t, stderr)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: http.DefaultClient, MaxRetries: -1}, nil)
	must(t, err)
	stopsCallInFlight(t, bin, cmd, cs, store, ws)
}

// The same on stdio, with the client's end of stdin left open.
func TestMCPStdioSignalStopsCallInFlight(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, store, ws := servedAgent(t, bin)
	cmd := exec.Command(bin, flags...)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	// Not the SDK's CommandTransport, which waits for the process itself.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.IOTransport{Reader: stdout, Writer: stdin}, nil)
	must(t, err)
	stopsCallInFlight(t, bin, cmd, cs, store, ws)
}

// stopsCallInFlight starts a write call that runs until stopped, sends
// SIGTERM once its change is staged, and checks that cairn exits within
// 30 s, as a session that ended, the call committed as stopped.
func stopsCallInFlight(t *testing.T, bin string, cmd *exec.Cmd, cs *sdk.ClientSession, store, ws string) {
	t.Helper()
	go cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "write_and_wait",
		Arguments: map[string]any{"path": "x.txt", "content": "staged"}})
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
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		if code := cmd.ProcessState.ExitCode(); code != exitDone {
			t.Errorf("exit %d, want %d", code, exitDone)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cairn mcp still runs 30 s after SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("x.txt reached the workspace: %v", err)
	}
	out, err := exec.Command(bin, "log", "--store", store, "sess").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "✗ mcp-1 write_and_wait") {
		t.Errorf("cairn log after the signal: %v\n%s", err, out)
	}
}
