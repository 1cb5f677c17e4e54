package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// fixture is a server on a session of a fresh agent, and a client of the
// SDK connected to it in memory.
type fixture struct {
	srv    *Server
	eng    *host.Engine
	store  *checkpoint.FileStore
	sess   *host.Session
	client *sdk.ClientSession
	ws     string
}

// serve starts a server for an agent of the built-in tools, the test
// tools and the hostile module's escape, with the given approval rules,
// and connects a client made with opts.
func serve(t *testing.T, approvals string, opts *sdk.ClientOptions) *fixture {
	t.Helper()
	testModules(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	must(t, os.Mkdir(ws, 0o755))
	af, err := host.ParseAgentFile([]byte(`name: mcp-test
model: {provider: script}
workspace: ws
tools:
  - {module: builtin}
  - {module: `+toolsWasm+`, grant: {workspace: rw}, limits: {timeout: 5m}}
  - {module: `+hostileWasm+`, only: [escape, cat], grant: {workspace: ro}}
`+approvals), dir)
	must(t, err)
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(t, err)
	ctx := context.Background()
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store, Connect: Connect})
	must(t, err)
	t.Cleanup(func() { eng.Close(ctx) })
	sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, ID: "m"})
	must(t, err)
	srv, err := NewServer(sess, Options{})
	must(t, err)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.srv.Connect(ctx, st, nil)
	must(t, err)
	client, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	must(t, err)
	t.Cleanup(func() {
		client.Close()
		ss.Wait()
		sess.Close()
	})
	return &fixture{srv: srv, eng: eng, store: store, sess: sess, client: client, ws: ws}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) call(t *testing.T, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	must(t, err)
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestListToolsWithHints(t *testing.T) {
	f := serve(t, "", nil)
	res, err := f.client.ListTools(context.Background(), nil)
	must(t, err)
	tools := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	for _, name := range []string{"read_file", "write_file", "edit_file", "count", "write_and_wait", "escape"} {
		if tools[name] == nil {
			t.Fatalf("tool %s not listed; have %v", name, res.Tools)
		}
	}
	if a := tools["read_file"].Annotations; !a.ReadOnlyHint || a.DestructiveHint != nil || *a.OpenWorldHint {
		t.Errorf("read_file hints %+v, want read-only, closed world", a)
	}
	if a := tools["write_file"].Annotations; a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("write_file hints %+v, want destructive", a)
	}
	if a := tools["count"].Annotations; !a.IdempotentHint {
		t.Errorf("count hints %+v, want idempotent", a)
	}
	schema, _ := json.Marshal(tools["write_file"].InputSchema)
	if !strings.Contains(string(schema), `"path"`) || !strings.Contains(string(schema), `"object"`) {
		t.Errorf("write_file schema %s does not declare its arguments", schema)
	}
}

// A write call changes the workspace once its round is committed: the
// file is there, the agent's journal has the round, `diff` has the
// change, and the file is a resource the client can read.
func TestCallWritesThroughTheJournal(t *testing.T) {
	f := serve(t, "", nil)
	res := f.call(t, "write_file", map[string]any{"path": "notes/a.txt", "content": "hello"})
	if res.IsError {
		t.Fatalf("write_file: %s", text(res))
	}
	if b, err := os.ReadFile(filepath.Join(f.ws, "notes", "a.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("workspace notes/a.txt = %q, %v", b, err)
	}
	if res.Meta["cairn/call"] != "mcp-1" {
		t.Errorf("result meta %v, want call mcp-1", res.Meta)
	}
	rec, err := f.store.Read("m")
	must(t, err)
	if rec.State.Round != 1 || len(rec.Tail) != 0 || rec.State.Messages[1].Text != text(res) {
		t.Errorf("journal: round %d, open records %d, messages %+v", rec.State.Round, len(rec.Tail), rec.State.Messages)
	}
	round, changes, err := f.eng.Changes(t.Context(), "m", 0)
	if err != nil || round != 1 || len(changes) != 2 || !changeWrote(changes[1], "hello") {
		t.Errorf("changes of round %d: %+v %v", round, changes, err)
	}
	uri := "file://" + filepath.ToSlash(f.ws) + "/notes/a.txt"
	list, err := f.client.ListResources(context.Background(), nil)
	must(t, err)
	if len(list.Resources) != 1 || list.Resources[0].URI != uri {
		t.Errorf("resources %+v, want %s", list.Resources, uri)
	}
	read, err := f.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
	must(t, err)
	if read.Contents[0].Text != "hello" {
		t.Errorf("read %s: %+v", uri, read.Contents[0])
	}
}

func TestStructuredContent(t *testing.T) {
	f := serve(t, "", nil)
	res := f.call(t, "count", map[string]any{"text": "one two three"})
	got, _ := json.Marshal(res.StructuredContent)
	if res.IsError || string(got) != `{"bytes":13,"words":3}` {
		t.Errorf("count: structured %s, text %q", got, text(res))
	}
	if res := f.call(t, "list_dir", map[string]any{}); res.StructuredContent != nil {
		t.Errorf("list_dir's text answer has structured content %v", res.StructuredContent)
	}
}

func TestBadArgumentsAreAClearError(t *testing.T) {
	f := serve(t, "", nil)
	res := f.call(t, "write_file", map[string]any{"path": 7})
	if !res.IsError || !strings.Contains(text(res), "invalid arguments") || !strings.Contains(text(res), "/path") {
		t.Errorf("bad arguments: %q, want an error naming the argument", text(res))
	}
	if _, err := f.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("an unknown tool was called")
	}
}

// The client's cancellation stops a call whose change is staged: the
// workspace stays as it was, the round is committed with a result that
// says the call was stopped, and the session goes on.
func TestCancelledCallDiscardsItsChanges(t *testing.T) {
	f := serve(t, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.client.CallTool(ctx, &sdk.CallToolParams{Name: "write_and_wait",
			Arguments: map[string]any{"path": "x.txt", "content": "staged"}})
		done <- err
	}()
	waitForStaged(t, filepath.Join(f.store.Dir(), "agents", "m", "staging", "round-1", "mcp-1"), "x.txt")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call returned %v", err)
	}
	// The next call waits for the cancelled one's round.
	if res := f.call(t, "list_dir", map[string]any{}); res.IsError || res.Meta["cairn/round"] != float64(2) {
		t.Fatalf("next call: %q %v", text(res), res.Meta)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("x.txt reached the workspace: %v", err)
	}
	rec, err := f.store.Read("m")
	must(t, err)
	if m := rec.State.Messages[1]; !m.IsError || m.CallID != "mcp-1" {
		t.Errorf("the cancelled call's result: %+v", m)
	}
}

// waitForStaged waits until a call has staged its write of name: then the
// change exists, and only the journal keeps it from the workspace.
func waitForStaged(t *testing.T, staging, name string) {
	t.Helper()
	for {
		if _, err := os.Stat(overlay.StagedFile(staging, name)); err == nil {
			return
		}
		runtime.Gosched()
	}
}

// Progress is reported to a client that asks for it: at the start of
// the call at least, whatever its length.
func TestProgress(t *testing.T) {
	got := make(chan string, 100)
	f := serve(t, "", &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		got <- req.Params.Message
	}})
	params := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{"text": "a b"}}
	params.SetProgressToken("p1")
	_, err := f.client.CallTool(context.Background(), params)
	must(t, err)
	if msg := <-got; !strings.Contains(msg, "count started") {
		t.Errorf("first progress: %q", msg)
	}
}

// An ask rule asks the client's user through elicitation, and a client
// that cannot be asked has the call refused with the reason.
func TestAskRuleElicits(t *testing.T) {
	rules := "approvals: [{tool: write_file, action: ask}]\n"
	var asked string
	f := serve(t, rules, &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked = req.Params.Message
		if strings.Contains(req.Params.Message, "no.txt") {
			return &sdk.ElicitResult{Action: "decline"}, nil
		}
		return &sdk.ElicitResult{Action: "accept"}, nil
	}})
	if res := f.call(t, "write_file", map[string]any{"path": "yes.txt", "content": "y"}); res.IsError || !strings.Contains(asked, "write_file") {
		t.Errorf("accepted: %q (asked %q)", text(res), asked)
	}
	res := f.call(t, "write_file", map[string]any{"path": "no.txt", "content": "n"})
	if !res.IsError || !strings.Contains(text(res), "declined") {
		t.Errorf("declined: %q", text(res))
	}
	if _, err := os.Stat(filepath.Join(f.ws, "no.txt")); !os.IsNotExist(err) {
		t.Errorf("a declined call wrote no.txt: %v", err)
	}

	g := serve(t, rules, nil)
	res = g.call(t, "write_file", map[string]any{"path": "a.txt", "content": "a"})
	if !res.IsError || !strings.Contains(text(res), "does not support elicitation") {
		t.Errorf("a client without elicitation: %q", text(res))
	}
}

// A hostile module served over MCP reaches nothing outside the
// workspace, and resources cannot be read outside it either.
func TestNoEscapeThroughMCP(t *testing.T) {
	f := serve(t, "", nil)
	secret := filepath.Join(filepath.Dir(f.ws), "outside.txt")
	must(t, os.WriteFile(secret, []byte("SECRET"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(f.ws, "link.txt")))
	out := text(f.call(t, "escape", map[string]any{}))
	if strings.Contains(out, "root:") || strings.Contains(out, "SECRET") {
		t.Errorf("escape read outside the workspace: %s", out)
	}
	out = text(f.call(t, "cat", map[string]any{"path": "/workspace/link.txt"}))
	if strings.Contains(out, "SECRET") {
		t.Errorf("cat followed a symlink out: %s", out)
	}
	prefix := "file://" + filepath.ToSlash(f.ws) + "/"
	for _, uri := range []string{prefix + "link.txt", prefix + "../outside.txt", prefix + "%2e%2e/outside.txt",
		"file:///etc/passwd", "file://" + filepath.ToSlash(secret)} {
		res, err := f.client.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
		if err == nil {
			t.Errorf("read %s: %+v", uri, res.Contents)
		}
	}
}

// A call that runs long is reported while it runs, not only when it
// starts.
func TestProgressWhileRunning(t *testing.T) {
	got := make(chan string, 1000)
	f := serve(t, "", &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		got <- req.Params.Message
	}})
	f.srv.opts.ProgressEvery = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &sdk.CallToolParams{Name: "write_and_wait", Arguments: map[string]any{"path": "p.txt", "content": "p"}}
	params.SetProgressToken("p2")
	go f.client.CallTool(ctx, params)
	if msg := <-got; !strings.Contains(msg, "write_and_wait started") {
		t.Errorf("first progress: %q", msg)
	}
	if msg := <-got; !strings.Contains(msg, "write_and_wait running for") {
		t.Errorf("second progress: %q", msg)
	}
}

// Calls a client makes at once are rounds one after another, each
// committed.
func TestConcurrentCallsAreRoundsInTurn(t *testing.T) {
	f := serve(t, "", nil)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.call(t, "write_file", map[string]any{"path": fmt.Sprintf("f%d.txt", i), "content": "x"})
		}()
	}
	wg.Wait()
	rec, err := f.store.Read("m")
	must(t, err)
	if rec.State.Round != 4 || len(rec.State.Messages) != 8 || len(rec.Tail) != 0 {
		t.Errorf("round %d, %d messages, %d open records; want 4 committed rounds", rec.State.Round, len(rec.State.Messages), len(rec.Tail))
	}
	entries, _ := os.ReadDir(f.ws)
	if len(entries) != 4 {
		t.Errorf("%d files in the workspace, want 4", len(entries))
	}
}

// changeWrote reports whether c left a file that holds text.
func changeWrote(c host.FileChange, text string) bool {
	_, after, err := c.Texts()
	return err == nil && string(after) == text
}

// Regression: a tool whose grant lets it reach the network was described
// to clients as read-only, idempotent and closed-world, the hints of a
// tool that only reads the workspace, though it may reach hosts beyond
// it and, by a method such as POST, change what is there.
func TestListToolsHintsOfANetworkTool(t *testing.T) {
	testModules(t)
	for _, tc := range []struct {
		grant              string
		readOnly, mutating bool
	}{
		{"{allow: [example.com]}", true, false},
		{"{allow: [example.com], methods: [GET, post]}", false, true},
	} {
		dir := t.TempDir()
		must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
		af, err := host.ParseAgentFile([]byte("name: mcp-net\nmodel: {provider: script}\nworkspace: ws\ntools:\n  - {module: fetch, grant: {net: "+tc.grant+"}}\n"), dir)
		must(t, err)
		store, err := host.OpenStore(filepath.Join(dir, "store"))
		must(t, err)
		ctx := context.Background()
		eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store, Connect: Connect})
		must(t, err)
		sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, ID: "n"})
		must(t, err)
		var fetch host.SessionTool
		for _, st := range sess.Tools() {
			if st.Name == "fetch" {
				fetch = st
			}
		}
		tool, err := mcpTool(fetch)
		must(t, err)
		a := tool.Annotations
		if a.ReadOnlyHint != tc.readOnly || !*a.OpenWorldHint || (a.DestructiveHint != nil) != tc.mutating || a.IdempotentHint == tc.mutating {
			t.Errorf("grant %s: hints read-only %v, open world %v, destructive %v, idempotent %v; want read-only %v, open world, destructive and not idempotent %v",
				tc.grant, a.ReadOnlyHint, *a.OpenWorldHint, a.DestructiveHint != nil, a.IdempotentHint, tc.readOnly, tc.mutating)
		}
		sess.Close()
		eng.Close(ctx)
	}
}
