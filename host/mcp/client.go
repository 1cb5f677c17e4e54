package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// Connect starts or reaches an agent file's MCP server and lists its
// tools; it is the host.Connector of cairn's engine. A command is started
// with only the environment its entry lists (and PATH and HOME), its
// stderr passed to cairn's; a relative program path is resolved against
// the agent file's directory dir.
//
// # Errors
//
// The server does not start, does not speak MCP, or fails to list its
// tools.
func Connect(ctx context.Context, s host.MCPServer, dir string) (host.ExternalTools, error) {
	t, err := transport(s, dir)
	if err != nil {
		return nil, err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "cairn", Version: "dev"}, nil)
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	c := &conn{cs: cs}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("list tools: %w", err)
		}
		schema, err := json.Marshal(tool.InputSchema)
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("tool %s: input schema: %w", tool.Name, err)
		}
		c.tools = append(c.tools, host.ExternalTool{Name: tool.Name, Description: tool.Description, InputSchema: schema})
	}
	return c, nil
}

func transport(s host.MCPServer, dir string) (sdk.Transport, error) {
	if s.URL != "" {
		hc := &http.Client{Transport: headers{s.Headers}}
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc}, nil
	}
	prog := s.Command[0]
	if strings.ContainsRune(prog, filepath.Separator) && !filepath.IsAbs(prog) {
		prog = filepath.Join(dir, prog)
	}
	cmd := exec.Command(prog, s.Command[1:]...)
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	cmd.Env = environ(s.Env)
	return &sdk.CommandTransport{Command: cmd}, nil
}

// environ is the command's environment: PATH, HOME and what env lists.
func environ(env []string) []string {
	out := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, e := range env {
		if strings.Contains(e, "=") {
			out = append(out, e)
		} else if v, ok := os.LookupEnv(e); ok {
			out = append(out, e+"="+v)
		}
	}
	return out
}

type headers struct{ h map[string]string }

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// conn is a connection to one MCP server.
type conn struct {
	cs    *sdk.ClientSession
	tools []host.ExternalTool
}

func (c *conn) Tools() []host.ExternalTool { return c.tools }

func (c *conn) Call(ctx context.Context, name string, input json.RawMessage) (string, bool, error) {
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: input})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, content := range res.Content {
		if t, ok := content.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		} else if raw, err := json.Marshal(content); err == nil {
			b.Write(raw)
		}
	}
	if b.Len() == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		b.Write(raw)
	}
	return b.String(), res.IsError, nil
}

func (c *conn) Close() error { return c.cs.Close() }
