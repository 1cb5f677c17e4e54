package mcp

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/host"
)

// runServerCalls runs an agent that makes calls, one a turn, of the MCP
// server toy (server: its entry's command or url), every tool allowed, its
// agent file's sandbox the given one. It returns the results the model
// read, in order, how the run ended and the agent file's directory (a
// command's working directory).
func runServerCalls(t *testing.T, ctx context.Context, sandbox, server string, calls ...string) ([]conversation.Message, *host.Result, string, error) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	script := "turns:\n"
	for _, c := range calls {
		script += "  - tool_calls: [" + c + "]\n"
	}
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script+"  - text: finished\n"), 0o644))
	af, err := host.ParseAgentFile([]byte(`name: uses-mcp
model: {provider: script, script: script.yaml}
workspace: ws
tools: [{module: builtin, only: [read_file]}]
sandbox: `+sandbox+`
mcp: [{name: toy, `+server+`}]
approvals: [{tool: "*", action: allow}]
`), dir)
	must(t, err)
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(t, err)
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store, Connect: Connect})
	must(t, err)
	defer eng.Close(context.Background())
	res, err := eng.Run(ctx, host.RunOptions{Agent: af, ID: "a", AutoDeny: true})
	if err != nil {
		return nil, nil, dir, err
	}
	rec, err := store.Read("a")
	must(t, err)
	var results []conversation.Message
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool {
			results = append(results, m)
		}
	}
	if len(results) != len(calls) {
		t.Fatalf("%d results for %d calls: %+v", len(results), len(calls), results)
	}
	return results, res, dir, nil
}

// toyCommand is the mcp entry's command of the test server started with
// args.
func toyCommand(t *testing.T, args ...string) string {
	return "command: [" + strings.Join(append([]string{toyServer(t)}, args...), ", ") + "]"
}

// sizeOf is the bytes of the files under dir.
func sizeOf(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	must(t, filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	}))
	return n
}

// Regression: a server's huge answer was neither capped nor contained: 10
// MiB of text went into the journal, the snapshot and the events. It is
// capped at the agent file's sandbox output, as a wasm tool's is: an
// answer a little over is refused once read, one far over is dropped
// while it is read, and the connection goes on (the server, started
// once, answers the next call).
func TestServerHugeAnswerIsCapped(t *testing.T) {
	results, res, dir, err := runServerCalls(t, context.Background(), "{output: 64KiB}", toyCommand(t, "start-once"),
		"{name: huge, input: {bytes: 100000}}", "{name: huge, input: {bytes: 2000000}}", "{name: shout, input: {text: hi}}")
	must(t, err)
	for i, m := range results[:2] {
		if !m.IsError || !strings.Contains(m.Text, "more than the output limit of 65536 bytes") ||
			!strings.Contains(m.Text, "sandbox: {output} raises the limit") || len(m.Text) > 1000 {
			t.Errorf("huge call %d: result %.300q (%d bytes), want an error naming the limit and its setting", i+1, m.Text, len(m.Text))
		}
	}
	if m := results[2]; m.IsError || m.Text != "HI" {
		t.Errorf("the call after them: %+v", m)
	}
	if res.Status != host.StatusDone {
		t.Errorf("run %s: %s", res.Status, res.Reason)
	}
	if n := sizeOf(t, filepath.Join(dir, "store")); n > 1<<20 {
		t.Errorf("the store holds %d bytes after the huge answers", n)
	}
}

// Regression: a server that died left every later call reported as "failed
// during the call, so what the call changed is unknown", though none was
// sent. The next call connects again.
func TestServerReconnectsAfterItDied(t *testing.T) {
	results, _, _, err := runServerCalls(t, context.Background(), "{}", toyCommand(t),
		"{name: die, input: {}}", "{name: shout, input: {text: again}}")
	must(t, err)
	if m := results[0]; !m.IsError || !strings.Contains(m.Text, "failed during the call") || !strings.Contains(m.Text, "unknown") {
		t.Errorf("the call it died in: %+v", m)
	}
	if m := results[1]; m.IsError || m.Text != "AGAIN" {
		t.Errorf("the call after: %+v, want the server started again", m)
	}
}

// Regression: a call that could not be sent (the connection had ended)
// was reported as the server failing during it, its effects unknown. It
// says it was not sent and changed nothing, and that the server is
// unavailable.
func TestServerCallNotSentChangedNothing(t *testing.T) {
	results, res, _, err := runServerCalls(t, context.Background(), "{}", toyCommand(t, "start-once"),
		"{name: die, input: {}}", "{name: shout, input: {text: again}}")
	must(t, err)
	m := results[1]
	if !m.IsError || !strings.Contains(m.Text, "MCP server toy is unavailable, so the call was not sent and changed nothing") ||
		strings.Contains(m.Text, "unknown") {
		t.Errorf("the call after it died: %+v", m)
	}
	if res.Status != host.StatusDone {
		t.Errorf("run %s: %s", res.Status, res.Reason)
	}
}

// Regression: a server that never answered initialize kept the run from
// starting, forever. Its start is bounded by the time limit of a call, and
// the error names the server and what to check.
func TestServerHangingAtStartTimesOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, _, _, err := runServerCalls(t, ctx, "{timeout: 1s}", toyCommand(t, "hang-at-start"), "{name: shout, input: {text: hi}}")
	if !errors.Is(err, host.ErrMCPServer) || !strings.Contains(err.Error(), "mcp server toy") ||
		!strings.Contains(err.Error(), "did not start and list its tools within 1s") || !strings.Contains(err.Error(), "check that `") {
		t.Errorf("err = %v, want ErrMCPServer naming the server, the time limit and what to check", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the run took %s to give up", d)
	}
}

// Regression: a call of a server that never answered blocked the run; the
// agent file's sandbox timeout did not apply. It does, as to a wasm tool,
// and the run goes on.
func TestServerHangingCallTimesOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	results, res, _, err := runServerCalls(t, ctx, "{timeout: 1s}", toyCommand(t),
		"{name: hang, input: {}}", "{name: shout, input: {text: hi}}")
	must(t, err)
	if m := results[0]; !m.IsError || !strings.Contains(m.Text, "ran past its time limit of 1s") ||
		!strings.Contains(m.Text, "sandbox: {timeout}") {
		t.Errorf("the hanging call: %+v", m)
	}
	if m := results[1]; m.IsError || m.Text != "HI" {
		t.Errorf("the call after: %+v", m)
	}
	if res.Status != host.StatusDone {
		t.Errorf("run %s: %s", res.Status, res.Reason)
	}
}

// Regression: a call cairn stopped was journaled as the server's failure
// ("MCP server toy failed during the call"), and a signal to cairn's
// process group reached the server too, which died of it before cairn
// could stop the call. The server has a process group of its own, and a
// call stopped by cairn says so.
func TestServerCallStoppedByCairn(t *testing.T) {
	f := serve(t, "mcp: [{name: toy, command: ["+toyServer(t)+"]}]\napprovals: [{tool: \"*\", action: allow}]\n", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "hang", Arguments: map[string]any{}})
		done <- err
	}()
	pid := 0
	for deadline := time.Now().Add(time.Minute); pid == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(f.ws), "hang.started"))
		pid, _ = strconv.Atoi(string(b))
	}
	if pid == 0 {
		t.Fatal("the server's hang did not start")
	}
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid {
		t.Errorf("the server's process group is %d (%v), want its own (%d)", pgid, err, pid)
	}
	cancel()
	<-done
	if res := f.call(t, "shout", map[string]any{"text": "next"}); res.IsError || text(res) != "NEXT" {
		t.Fatalf("the call after: %q", text(res))
	}
	rec, err := f.store.Read("m")
	must(t, err)
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool && m.CallID == "mcp-1" {
			if !m.IsError || !strings.Contains(m.Text, "cairn stopped the call") || strings.Contains(m.Text, "failed during the call") {
				t.Errorf("the stopped call's result: %q", m.Text)
			}
			return
		}
	}
	t.Errorf("no result of the stopped call in %+v", rec.State.Messages)
}
