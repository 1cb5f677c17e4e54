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

// Regression: at SIGTERM, `cairn mcp --http` ended its clients' sessions
// before the calls it stopped were answered: the client whose call ran,
// and one whose call waited for its turn, saw only "request terminated
// without response", where on stdio each is told that the server stopped
// and what became of its call. Over HTTP each is told so too.
func TestMCPHTTPSignalAnswersCallsInFlight(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, store, _ := servedAgent(t, bin)
	cmd := exec.Command(bin, append(flags, "--http", "127.0.0.1:0")...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill() })
	url := serverURL(t, stderr)
	connect := func() *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: url, HTTPClient: http.DefaultClient, MaxRetries: -1}, nil)
		must(t, err)
		return cs
	}
	running, waiting := connect(), connect()
	errs := make(chan error, 2)
	call := func(cs *sdk.ClientSession, name string, args map[string]any) {
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		errs <- err
	}
	go call(running, "write_and_wait", map[string]any{"path": "x.txt", "content": "staged"})
	staged := overlay.StagedFile(filepath.Join(store, "agents", "sess", "staging", "round-1", "mcp-1"), "x.txt")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(staged); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call staged nothing within a minute")
		}
	}
	go call(waiting, "count", map[string]any{"text": "a b"})
	time.Sleep(500 * time.Millisecond) // the second call waits for its turn
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	var got []string
	for range 2 {
		select {
		case err := <-errs:
			if err == nil {
				t.Fatal("a call stopped by the signal succeeded")
			}
			got = append(got, err.Error())
		case <-time.After(30 * time.Second):
			t.Fatal("no answer 30 s after SIGTERM")
		}
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"committed with the result", "cairn log sess", "did not start"} {
		if !strings.Contains(all, want) {
			t.Errorf("the clients were not told %q:\n%s", want, all)
		}
	}
	cmd.Wait()
}
