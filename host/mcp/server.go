// Package mcp serves an agent's sandboxed tools over the Model Context
// Protocol, so that any MCP client (an IDE, a desktop assistant, another
// agent framework) can call them.
//
// A Server drives one host.Session: the MCP client takes the place of the
// agent's model, and each tools/call becomes one round of the agent. The
// call therefore runs exactly as a call the model asked for would — a
// fresh instance of its module, its own overlay of the workspace, the
// agent file's grants, limits and approval rules, its changes applied only
// after its result is journaled — and the session is an agent in the
// store that `cairn show`, `log`, `events`, `diff` and `undo` work on. The
// sandbox does not know MCP exists; this package only translates.
//
// What the protocol adds: tool annotations from the manifest, structured
// content when a tool answers with a JSON object, progress notifications
// while a call runs, cancellation (the call is stopped and its changes
// discarded), approval through the client's elicitation, and the
// workspace's files as read-only resources. docs/mcp.md describes it for
// users.
//
// A Server is safe for concurrent use by many client sessions; their
// calls are taken one at a time, because each is a round of one agent.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/host"
)

// Options configure a Server. The zero value reports progress every
// second.
type Options struct {
	// Version is the server's version, as told to clients.
	Version string
	// ProgressEvery is how often a running call tells a client that asked
	// for progress how long it has run.
	ProgressEvery time.Duration
	// MaxResources bounds how many of the workspace's files are listed as
	// resources; zero means DefaultMaxResources. Every file can be read
	// by its URI whether it is listed or not.
	MaxResources int
}

// DefaultMaxResources is how many workspace files are listed by default.
const DefaultMaxResources = 1000

// Server serves a session's tools and its workspace over MCP.
type Server struct {
	sess *host.Session
	srv  *sdk.Server
	opts Options
	res  *resources
}

// NewServer makes the MCP server of a session: one MCP tool for each of
// its tools, and its workspace's files as resources.
func NewServer(sess *host.Session, opts Options) (*Server, error) {
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = time.Second
	}
	if opts.MaxResources <= 0 {
		opts.MaxResources = DefaultMaxResources
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "cairn", Title: "cairn sandboxed tools", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions(sess)})
	s := &Server{sess: sess, srv: srv, opts: opts}
	for _, t := range sess.Tools() {
		tool, err := mcpTool(t)
		if err != nil {
			return nil, err
		}
		srv.AddTool(tool, s.handler(t.Name, !tool.Annotations.ReadOnlyHint))
	}
	res, err := newResources(srv, sess.Workspace(), opts.MaxResources)
	if err != nil {
		return nil, err
	}
	s.res = res
	return s, nil
}

func instructions(sess *host.Session) string {
	return fmt.Sprintf("These tools run in cairn's WebAssembly sandbox on the workspace %s. "+
		"Each call is journaled as a round of agent %s; a call's changes reach the workspace only after it finishes, "+
		"and `cairn diff %s` / `cairn undo %s` show and take back the last round's changes.",
		sess.Workspace(), sess.ID(), sess.ID(), sess.ID())
}

// ServeIO serves one client speaking newline-delimited JSON-RPC on r and
// w (MCP's stdio transport) until it closes r or ctx ends. A message
// longer than maxStdioMessage is answered with an error and the session
// goes on.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	lw := &lockedWriter{w: w}
	in := newLineLimiter(r, lw, maxStdioMessage)
	return s.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{lw},
		MaxLineLength: maxStdioMessage + 1<<10})
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Run serves one client on t (for example &sdk.StdioTransport{}) until
// the client goes away or ctx ends.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	return s.srv.Run(ctx, t)
}

// mcpTool describes a tool to MCP clients: its schema as declared, and
// hints from its manifest. A sandboxed tool is closed-world: the sandbox
// gives it the workspace and nothing else. An MCP server's tool, which
// runs outside it, may do anything.
func mcpTool(t host.SessionTool) (*sdk.Tool, error) {
	var schema map[string]any
	if err := json.Unmarshal(t.Schema, &schema); err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	if schema["type"] == nil {
		schema["type"] = "object"
	}
	readOnly := !t.Mutates && t.Needs.Workspace != abi.AccessReadWrite && !t.Unsandboxed
	openWorld := t.Unsandboxed
	ann := &sdk.ToolAnnotations{ReadOnlyHint: readOnly, IdempotentHint: t.Idempotent || readOnly,
		OpenWorldHint: &openWorld}
	if !readOnly {
		// A tool that may change the workspace may overwrite or delete
		// what is there (`cairn undo` takes the last round back).
		destructive := true
		ann.DestructiveHint = &destructive
	}
	return &sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: schema, Annotations: ann}, nil
}

// handler runs a tools/call as a round of the session. After a call of a
// tool that may change the workspace, the resources are listed anew.
func (s *Server) handler(name string, changes bool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := json.RawMessage(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		if s.sess.Asks(name, args) {
			if res := askFirst(req, name, args, s.sess.ID()); res != nil {
				return res, nil
			}
		}
		stop := s.reportProgress(ctx, req, name)
		out, err := s.sess.Call(ctx, name, args, approver(req))
		stop()
		if err != nil {
			return nil, err
		}
		if changes {
			s.res.sync(ctx)
		}
		return result(out), nil
	}
}

// result is the MCP result of a call: its text, and the same as
// structured content when the text is a JSON object.
func result(out *host.CallOutcome) *sdk.CallToolResult {
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out.Output}}, IsError: out.IsError}
	res.Meta = sdk.Meta{"cairn/call": out.Call, "cairn/round": out.Round}
	if !out.IsError {
		var obj map[string]any
		if json.Unmarshal([]byte(out.Output), &obj) == nil {
			res.StructuredContent = obj
		}
	}
	return res
}
