package mcp

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

var (
	toyOnce sync.Once
	toyBin  string
	toyErr  error
)

// toyServer builds the test MCP server once.
func toyServer(t *testing.T) string {
	t.Helper()
	toyOnce.Do(func() {
		toyBin = filepath.Join(filepath.Dir(testCache), "toyserver")
		out, err := exec.Command("go", "build", "-o", toyBin, "./testdata/toyserver").CombinedOutput()
		if err != nil {
			toyErr = errors.New(string(out))
		}
	})
	if toyErr != nil {
		t.Fatalf("build the test MCP server: %v", toyErr)
	}
	return toyBin
}

// runWithServer runs an agent whose script calls the test server's tool
// with input, and returns how the run ended and the agent's state.
func runWithServer(t *testing.T, tool, input, approvals string, command string) (*host.Result, *checkpoint.State, error) {
	t.Helper()
	res, st, _, err := runWithServerEvents(t, tool, input, approvals, command)
	return res, st, err
}

func runWithServerEvents(t *testing.T, tool, input, approvals string, command string) (*host.Result, *checkpoint.State, []host.Event, error) {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`turns:
  - tool_calls: [{name: `+tool+`, input: `+input+`}]
  - text: finished
`), 0o644))
	af, err := host.ParseAgentFile([]byte(`name: uses-mcp
model: {provider: script, script: script.yaml}
workspace: ws
tools: [{module: builtin, only: [read_file]}]
mcp: [{name: toy, command: [`+command+`]}]
`+approvals), dir)
	must(t, err)
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(t, err)
	ctx := context.Background()
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store, Connect: Connect})
	must(t, err)
	defer eng.Close(ctx)
	var events []host.Event
	res, err := eng.Run(ctx, host.RunOptions{Agent: af, ID: "a", AutoDeny: true,
		OnEvent: func(e host.Event) { events = append(events, e) }})
	if err != nil {
		return nil, nil, nil, err
	}
	rec, err := store.Read("a")
	must(t, err)
	if infos, err := host.ListTools(af); err != nil || infos[len(infos)-1].Module != "mcp:toy" ||
		!strings.Contains(infos[len(infos)-1].Tool.Description, "[unsandboxed: MCP server toy]") {
		t.Errorf("tools ls of the agent file: %+v %v, want the server listed as unsandboxed", infos, err)
	}
	return res, rec.State, events, nil
}

// toolResult is the result the model read for the agent's first call.
func toolResult(t *testing.T, st *checkpoint.State) conversation.Message {
	t.Helper()
	for _, m := range st.Messages {
		if m.Role == conversation.RoleTool {
			return m
		}
	}
	t.Fatalf("no tool result in %+v", st.Messages)
	return conversation.Message{}
}

// A tool of an MCP server is asked about by default: with no one to ask,
// it is denied, and the server is never called.
func TestServerToolAsksByDefault(t *testing.T) {
	res, st, err := runWithServer(t, "shout", "{text: hi}", "", toyServer(t))
	must(t, err)
	if m := toolResult(t, st); !m.IsError || !strings.Contains(m.Text, "denied") || res.Status != host.StatusDone {
		t.Errorf("status %s, result %+v; want the call denied", res.Status, m)
	}
}

// Allowed by a rule, a call of an MCP server's tool is journaled like any
// call, its result the server's answer.
func TestServerToolCallIsJournaled(t *testing.T) {
	_, st, events, err := runWithServerEvents(t, "shout", "{text: hi}", "approvals: [{tool: shout, action: allow}]\n", toyServer(t))
	must(t, err)
	if m := toolResult(t, st); m.IsError || m.Text != "HI" {
		t.Errorf("result %+v, want HI", m)
	}
	starts := 0
	for _, e := range events {
		if e.Type == host.EventToolStart {
			starts++
			if !e.Call.Unsandboxed {
				t.Errorf("tool_start of %s is not labelled unsandboxed", e.Call.Tool)
			}
		}
	}
	if starts != 1 {
		t.Errorf("%d tool_start events, want 1", starts)
	}
}

// A server that dies mid-call gives the model an error saying the call's
// effects are unknown; the run goes on.
func TestServerDyingMidCall(t *testing.T) {
	res, st, err := runWithServer(t, "die", "{}", "approvals: [{tool: die, action: allow}]\n", toyServer(t))
	must(t, err)
	m := toolResult(t, st)
	if !m.IsError || !strings.Contains(m.Text, "MCP server toy failed during the call") || !strings.Contains(m.Text, "unknown") {
		t.Errorf("result %+v", m)
	}
	if res.Status != host.StatusDone {
		t.Errorf("run %s: %s", res.Status, res.Reason)
	}
}

// A server that does not start keeps the run from starting, with an error
// that names it.
func TestServerThatDoesNotStart(t *testing.T) {
	_, _, err := runWithServer(t, "shout", "{text: hi}", "", filepath.Join(t.TempDir(), "no-such-server"))
	if !errors.Is(err, host.ErrMCPServer) || !strings.Contains(err.Error(), "mcp server toy") {
		t.Errorf("err = %v, want ErrMCPServer naming the server", err)
	}
}

// Served by cairn mcp, an agent file's MCP server tools are hinted as
// open-world and destructive, and ask the client by default.
func TestServedServerTools(t *testing.T) {
	asked := 0
	f := serve(t, "mcp: [{name: toy, command: ["+toyServer(t)+"]}]\n", &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked++
			return &sdk.ElicitResult{Action: "accept"}, nil
		}})
	res, err := f.client.ListTools(context.Background(), nil)
	must(t, err)
	var shout *sdk.Tool
	for _, tool := range res.Tools {
		if tool.Name == "shout" {
			shout = tool
		}
	}
	if shout == nil || shout.Annotations.ReadOnlyHint || !*shout.Annotations.OpenWorldHint || !*shout.Annotations.DestructiveHint {
		t.Fatalf("shout: %+v", shout)
	}
	if out := f.call(t, "shout", map[string]any{"text": "hey"}); out.IsError || text(out) != "HEY" || asked != 1 {
		t.Errorf("shout: %q, asked %d times", text(out), asked)
	}
}
