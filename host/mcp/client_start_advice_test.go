package mcp

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/host"
)

// Regression: a server that could not be started, that exited or wrote
// something other than JSON-RPC on its stdout before it answered
// initialize, or a url nothing answers at, kept the run from starting
// with the SDK's error alone (`connect: connection closed: calling
// "initialize": client is closing: invalid character 'g' looking for
// beginning of value`), which said neither that the server had exited,
// with what status, nor what to check. Each says what happened and what
// to check.
func TestServerStartFailureSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closed := ln.Addr().String()
	ln.Close()
	for _, tt := range []struct {
		name   string
		server host.MCPServer
		want   []string
	}{
		{"not found", host.MCPServer{Name: "nope", Command: []string{"no-such-mcp-server-anywhere", "stdio"}},
			[]string{`"no-such-mcp-server-anywhere"`, "PATH", "absolute path"}},
		{"no such file", host.MCPServer{Name: "gone", Command: []string{"./servers/gone"}},
			[]string{"could not be started", "`./servers/gone`", "agent file's directory"}},
		{"garbage", host.MCPServer{Name: "garbage", Command: []string{"sh", "-c", "echo garbage; exit 3"}},
			[]string{"exit status 3", "before it answered initialize", "not a JSON-RPC message", "stderr", "`sh -c echo garbage; exit 3`"}},
		{"exits", host.MCPServer{Name: "exits", Command: []string{"sh", "-c", "exit 7"}},
			[]string{"exit status 7", "before it answered initialize"}},
		{"url", host.MCPServer{Name: "gone", URL: "http://" + closed + "/mcp"},
			[]string{"connection refused", "http://" + closed + "/mcp", "Streamable HTTP", "running"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tools, err := Connect(ctx, tt.server, t.TempDir(), host.Limits{})
			if err == nil {
				tools.Close()
				t.Fatal("connected")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}
