package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest/builtin"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/interleave"
	"github.com/cairnrun/cairn/sandbox"
)

// BenchmarkToolsCall is a tools/call of the built-in read_file made by
// the SDK's client over the stdio transport's framing (newline-delimited
// JSON-RPC on two OS pipes), against the same call as a round of the
// session without MCP (overlay, sandbox call, result journaled with an
// fdatasync, round committed) and against the sandbox call alone on a
// plain mount, interleaved in one run, each after 2 ms idle. p50-µs is
// the median of each; mcp-x-sandbox and session-x-sandbox are the
// ratios, protocol-µs what MCP adds to the session's round.
//
//	go test ./host/mcp -run '^$' -bench ToolsCall -benchtime 1000x
func BenchmarkToolsCall(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	ws := filepath.Join(dir, "ws")
	must(b, os.Mkdir(ws, 0o755))
	must(b, os.WriteFile(filepath.Join(ws, "f.txt"), []byte("one\ntwo\nthree\n"), 0o644))
	store, err := host.OpenStore(filepath.Join(dir, "store"))
	must(b, err)
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: testCache, Store: store})
	must(b, err)
	defer eng.Close(ctx)
	af, err := host.ParseAgentFile([]byte("name: bench\nmodel: {provider: script}\ntools: [{module: builtin, only: [read_file]}]\n"), dir)
	must(b, err)
	sess, err := eng.OpenSession(ctx, host.SessionOptions{Agent: af, ID: "bench", Workspace: ws})
	must(b, err)
	defer sess.Close()
	cs := pipeClient(b, sess)
	defer cs.Close()
	mod, policy, req := sandboxCall(b, ws)
	args := map[string]any{"path": "f.txt"}
	kinds := []interleave.Way{
		{Name: "sandbox", Call: func() {
			if r, err := mod.Call(ctx, policy, req); err != nil || r.Response.Error != "" {
				b.Fatal(err, r.Response.Error)
			}
		}},
		{Name: "session", Call: func() {
			if out, err := sess.Call(ctx, "read_file", []byte(`{"path":"f.txt"}`), nil); err != nil || out.IsError {
				b.Fatal(err, out)
			}
		}},
		{Name: "mcp", Call: func() {
			if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: args}); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}},
	}
	p50 := interleave.Medians(b, kinds, func() { time.Sleep(2 * time.Millisecond) })
	b.ReportMetric(p50[1]/p50[0], "session-x-sandbox")
	b.ReportMetric(p50[2]/p50[0], "mcp-x-sandbox")
	b.ReportMetric(p50[2]-p50[1], "protocol-µs")
}

// pipeClient serves the session on a pair of OS pipes, as `cairn mcp`
// serves stdio, and connects the SDK's client to it.
func pipeClient(b *testing.B, sess *host.Session) *sdk.ClientSession {
	srv, err := NewServer(sess, Options{})
	must(b, err)
	toServer, fromClient, err := os.Pipe()
	must(b, err)
	fromServer, toClient, err := os.Pipe()
	must(b, err)
	go srv.ServeIO(context.Background(), toServer, toClient)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
		&sdk.IOTransport{Reader: fromServer, Writer: fromClient}, nil)
	must(b, err)
	return cs
}

// sandboxCall is the read_file call alone: the built-in module on a
// read-only mount of the workspace.
func sandboxCall(b *testing.B, ws string) (*sandbox.Module, sandbox.Policy, abi.Request) {
	ctx := context.Background()
	rt, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: testCache})
	must(b, err)
	b.Cleanup(func() { rt.Close(ctx) })
	mod, err := rt.Load(ctx, builtin.Module).Wait(ctx)
	must(b, err)
	policy := sandbox.Policy{Mounts: []sandbox.Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: true}}}
	return mod, policy, abi.Request{ABI: abi.Version, Tool: "read_file", Input: `{"path":"f.txt"}`, Workspace: abi.WorkspaceDir}
}
