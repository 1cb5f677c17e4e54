package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// servedAgent writes an agent file of the built-in tools and the MCP test
// tools (a tool that writes a file and runs until stopped), and returns
// its flags for `cairn mcp` and the store and workspace it uses.
func servedAgent(t *testing.T, bin string) (flags []string, store, ws string) {
	t.Helper()
	dir := t.TempDir()
	packedModule(t, bin, dir, "github.com/cairnrun/cairn/host/mcp/testdata/mcptools")
	ws, store = filepath.Join(dir, "workspace"), filepath.Join(dir, "store")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`name: served
model: {provider: script}
workspace: workspace
tools:
  - {module: builtin}
  - {module: mcptools.wasm, grant: {workspace: rw}, limits: {timeout: 10m}}
`), 0o644))
	return []string{"mcp", "-f", filepath.Join(dir, "agent.yaml"), "--store", store, "--cache", cacheForTests(t), "--id", "sess"}, store, ws
}

// stdioClient starts `cairn mcp` as a subprocess and connects the SDK's
// client to it over stdio.
func stdioClient(t *testing.T, cmd *exec.Cmd) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to cairn mcp: %v", err)
	}
	return cs
}

func callText(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// The SDK's client, talking to `cairn mcp` over stdio, lists the tools
// and calls a read and a write tool; the session is an agent that `cairn
// log`, `diff` and `show` read.
func TestMCPStdioSession(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, store, ws := servedAgent(t, bin)
	must(t, os.WriteFile(filepath.Join(ws, "in.txt"), []byte("alpha\n"), 0o644))
	cmd := exec.Command(bin, flags...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs := stdioClient(t, cmd)
	tools, err := cs.ListTools(context.Background(), nil)
	must(t, err)
	if len(tools.Tools) != 8 {
		t.Errorf("%d tools listed, want the 6 built-in and 2 test tools", len(tools.Tools))
	}
	if out, isErr := callText(t, cs, "read_file", map[string]any{"path": "in.txt"}); isErr || !strings.Contains(out, "alpha") {
		t.Errorf("read_file: %q", out)
	}
	if out, isErr := callText(t, cs, "write_file", map[string]any{"path": "out.txt", "content": "written over MCP\n"}); isErr {
		t.Errorf("write_file: %q", out)
	}
	if out, isErr := callText(t, cs, "write_file", map[string]any{"content": 3}); !isErr || !strings.Contains(out, "invalid arguments") {
		t.Errorf("bad arguments: %q, want a clear error", out)
	}
	must(t, cs.Close())
	if b, err := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "written over MCP\n" {
		t.Fatalf("workspace out.txt = %q, %v", b, err)
	}
	if !strings.Contains(stderr.String(), "agent sess serves 8 tools on stdio") {
		t.Errorf("stderr does not name the session's agent: %s", stderr.String())
	}
	out, err := exec.Command(bin, "diff", "--store", store, "sess").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "out.txt") || !strings.Contains(string(out), "+written over MCP") {
		t.Errorf("cairn diff: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "show", "--store", store, "sess").CombinedOutput()
	if err != nil || !regexp.MustCompile(`boundary\s+round 3`).Match(out) {
		t.Errorf("cairn show: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "log", "--store", store, "sess").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "mcp-2 write_file") {
		t.Errorf("cairn log: %v\n%s", err, out)
	}
}

// kill -9 of `cairn mcp` while a write call runs, its change staged:
// the workspace is untouched, and the next session of the agent seals the
// call, which `cairn log` shows.
func TestMCPKillDashNineMidCall(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, store, ws := servedAgent(t, bin)
	cmd := exec.Command(bin, flags...)
	cs := stdioClient(t, cmd)
	go cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "write_and_wait",
		Arguments: map[string]any{"path": "x.txt", "content": "staged"}})
	staged := overlay.StagedFile(filepath.Join(store, "agents", "sess", "staging", "round-1", "mcp-1"), "x.txt")
	for {
		if _, err := os.Stat(staged); err == nil {
			break
		}
		runtime.Gosched()
	}
	must(t, cmd.Process.Kill())
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("x.txt reached the workspace: %v", err)
	}
	out, _ := exec.Command(bin, "log", "--store", store, "sess").CombinedOutput()
	if !strings.Contains(string(out), "round 1 was interrupted") {
		t.Errorf("cairn log after the kill:\n%s", out)
	}
	// The next session of the agent seals the call and goes on.
	next := exec.Command(bin, flags...)
	var stderr strings.Builder
	next.Stderr = &stderr
	cs = stdioClient(t, next)
	if _, isErr := callText(t, cs, "list_dir", map[string]any{}); isErr {
		t.Error("list_dir failed after the seal")
	}
	must(t, cs.Close())
	if !strings.Contains(stderr.String(), "sealed call mcp-1 (write_and_wait), interrupted while executing; effects: none") {
		t.Errorf("the next session did not say it sealed the call: %s", stderr.String())
	}
	out, err := exec.Command(bin, "log", "--store", store, "sess").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "✗ mcp-1 write_and_wait: This call was interrupted") ||
		!strings.Contains(string(out), "mcp-2 list_dir") {
		t.Errorf("cairn log after the seal: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !os.IsNotExist(err) {
		t.Errorf("x.txt reached the workspace after the seal: %v", err)
	}
}

// `cairn mcp --http` on loopback with a token: the SDK's client over
// Streamable HTTP is refused without the token and served with it.
func TestMCPStreamableHTTP(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	flags, _, ws := servedAgent(t, bin)
	cmd := exec.Command(bin, append(flags, "--http", "127.0.0.1:0", "--token", "s3cret")...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := serverURL(t, stderr)
	client := sdk.NewClient(&sdk.Implementation{Name: "cairn-test", Version: "1"}, nil)
	ctx := context.Background()
	if _, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil {
		t.Error("connected without the token")
	}
	hc := &http.Client{Transport: bearer{"s3cret"}}
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	must(t, err)
	defer cs.Close()
	if out, isErr := callText(t, cs, "write_file", map[string]any{"path": "h.txt", "content": "over http"}); isErr {
		t.Fatalf("write_file: %s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "h.txt")); string(b) != "over http" {
		t.Errorf("h.txt = %q", b)
	}
}

// serverURL reads the address `cairn mcp --http` prints, and drains the
// rest of its stderr.
func serverURL(t *testing.T, stderr io.Reader) string {
	t.Helper()
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := regexp.MustCompile(`on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1]
		}
	}
	t.Fatal("cairn mcp --http printed no address")
	return ""
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCPNonLoopbackNeedsAToken(t *testing.T) {
	ws := t.TempDir()
	for _, addr := range []string{"0.0.0.0:0", ":8080", "192.0.2.1:80"} {
		code, _, stderr := cairn(t, "mcp", "--workspace", ws, "--store", t.TempDir(), "--http", addr)
		if code != exitUsage || !strings.Contains(stderr, "bearer token") || !strings.Contains(stderr, "--token") {
			t.Errorf("--http %s without --token: exit %d, %s", addr, code, stderr)
		}
	}
	code, _, stderr := cairn(t, "mcp", "--store", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "--workspace") {
		t.Errorf("no agent file and no workspace: exit %d, %s", code, stderr)
	}
}
