package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/sandbox/overlay"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Regression: a stdio client killed during a call (both pipes closed)
// left the call running to its time limit (10 minutes here), and the
// process with it: cairn's stdout dropped the progress it could no
// longer write instead of failing. The call is stopped as a cancellation
// stops it, committed saying so, its change discarded, and cairn exits.
func TestMCPStdioClientGoneStopsCallInFlight(t *testing.T) {
	t.Parallel()
	stdioClientGone(t, true)
}

// Regression: the same for a call that asked for no progress, which
// writes nothing until its answer: the client's end of stdout, found
// closed once its stdin has ended, says it is gone.
func TestMCPStdioClientGoneWithoutProgress(t *testing.T) {
	t.Parallel()
	stdioClientGone(t, false)
}

func stdioClientGone(t *testing.T, progress bool) {
	bin := cairnBinary(t)
	flags, store, ws := servedAgent(t, bin)
	cmd := exec.Command(bin, flags...)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil).Connect(context.Background(),
		&sdk.IOTransport{Reader: stdout, Writer: stdin}, nil)
	must(t, err)
	params := &sdk.CallToolParams{Name: "write_and_wait", Arguments: map[string]any{"path": "x.txt", "content": "staged"}}
	if progress {
		params.SetProgressToken("gone")
	}
	go cs.CallTool(context.Background(), params)
	waitStaged(t, store)
	stdin.Close()
	stdout.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cairn mcp still runs 30 s after its client closed both pipes")
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("x.txt reached the workspace: %v", err)
	}
	out, err := exec.Command(bin, "log", "--store", store, "sess").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "✗ mcp-1 write_and_wait") {
		t.Errorf("cairn log after the client went: %v\n%s", err, out)
	}
}

// waitStaged waits until the first call of agent sess has staged x.txt.
func waitStaged(t *testing.T, store string) {
	t.Helper()
	staged := overlay.StagedFile(filepath.Join(store, "agents", "sess", "staging", "round-1", "mcp-1"), "x.txt")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(staged); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the call staged nothing within a minute")
		}
	}
}

// Regression: over HTTP, a client killed during a call (its connections
// dropped, no DELETE) left the call running to its time limit (10
// minutes here), and another client's call waited behind it. The call is
// stopped once its request ends unanswered, committed saying so, its
// change discarded, and the next call runs.
func TestMCPHTTPClientGoneStopsCallInFlight(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, store, ws := servedAgent(t, bin)
	cmd := exec.Command(bin, append(flags, "--http", "127.0.0.1:0")...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	url := serverURL(t, stderr)
	var mu sync.Mutex
	var conns []net.Conn
	dead := false // the client is killed: it sends nothing more
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if dead {
			return nil, errors.New("killed")
		}
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			conns = append(conns, c)
		}
		return c, err
	}
	connect := func(hc *http.Client) *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
		must(t, err)
		return cs
	}
	killed := connect(&http.Client{Transport: &http.Transport{DialContext: dial}})
	go killed.CallTool(context.Background(), &sdk.CallToolParams{Name: "write_and_wait",
		Arguments: map[string]any{"path": "x.txt", "content": "staged"}})
	waitStaged(t, store)
	mu.Lock()
	dead = true
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
	other := connect(http.DefaultClient)
	defer other.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := other.CallTool(ctx, &sdk.CallToolParams{Name: "list_dir", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("another client's call after the first client went away: %v", err)
	}
	if res.IsError {
		t.Errorf("list_dir: %+v", res.Content)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("x.txt reached the workspace: %v", err)
	}
	out, err := exec.Command(bin, "log", "--store", store, "sess").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "✗ mcp-1 write_and_wait") {
		t.Errorf("cairn log after the client went: %v\n%s", err, out)
	}
}
