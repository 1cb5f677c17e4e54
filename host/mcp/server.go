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
// calls are taken one at a time, because each is a round of one agent,
// in no promised order.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// Error codes a Server answers with, in JSON-RPC's range for a server's
// own errors (the SDK and MCP use -32001 to -32005, -32020 to -32022 and
// -32042). A request it cannot take for what it asks (a resource URI that
// names no file of the workspace, or a file too large) is answered with
// JSON-RPC's invalid params, -32602; any other failure with internal
// error, -32603.
const (
	// CodeSessionPaused: the session's agent was paused (host.ErrSessionPaused);
	// no call is taken here any more, and a new session of the agent goes on.
	CodeSessionPaused = -32010
	// CodeSessionBroken: a round could not be journaled (host.ErrSessionBroken);
	// no call is taken here any more, and a new session of the agent seals
	// what was in flight.
	CodeSessionBroken = -32011
)

// ErrServerClosed: a call came after Close, or was waiting for its turn
// when Close stopped the calls. (A call Close stops while it runs has its
// result, which says it was stopped.)
var ErrServerClosed = errors.New("the MCP server was closed")

// Server serves a session's tools and its workspace over MCP.
type Server struct {
	sess      *host.Session
	srv       *sdk.Server
	opts      Options
	res       *resources
	questions questions
	// turn is a token: whoever holds it makes the next call of the session.
	turn chan struct{}
	// closed ends with Close; every call stops then.
	closed context.Context
	close  context.CancelCauseFunc
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
	s := &Server{sess: sess, srv: srv, opts: opts, turn: make(chan struct{}, 1)}
	s.turn <- struct{}{}
	s.closed, s.close = context.WithCancelCause(context.Background())
	srv.AddReceivingMiddleware(s.codeResourceErrors)
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
// w (MCP's stdio transport) until it closes r or ctx ends; when ctx ends,
// the client's calls in flight stop first. A message longer than
// maxStdioMessage, or a line that is not a JSON-RPC message the SDK takes,
// is answered with an error and the session goes on (see messageCheck).
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	lw := &lockedWriter{w: w} // the SDK's messages and the answers to lines refused
	var session atomic.Pointer[sdk.ServerSession]
	in := newLineLimiter(r, lw, maxStdioMessage)
	in.check = (&messageCheck{batches: func() bool { return takesBatches(session.Load()) }}).check
	ss, err := s.connect(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{lw},
		MaxLineLength: maxStdioMessage + 1<<10})
	if err != nil {
		return err
	}
	session.Store(ss)
	return serveSession(ctx, ss)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// Run serves one client on t (for example &sdk.StdioTransport{}) until
// the client goes away or ctx ends; when ctx ends, the client's calls in
// flight stop first.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	ss, err := s.connect(ctx, t)
	if err != nil {
		return err
	}
	return serveSession(ctx, ss)
}

// servingKey is the context value, in the contexts of a client's
// requests, whose end stops its calls: the SDK hands its handlers a
// context that keeps the values of the one a client was connected with,
// but not its end.
type servingKey struct{}

// connect connects a client on t whose calls stop when ctx ends.
func (s *Server) connect(ctx context.Context, t sdk.Transport) (*sdk.ServerSession, error) {
	return s.srv.Connect(context.WithValue(ctx, servingKey{}, ctx), t, nil)
}

// serveSession waits until the client of ss goes away, or ctx ends; then it
// closes ss, which waits for the client's handlers (their calls stopped
// by ctx's end) to return.
func serveSession(ctx context.Context, ss *sdk.ServerSession) error {
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		ss.Close()
		<-done
		return ctx.Err()
	}
}

// Close stops every call in flight, as a client's cancellation does (its
// round committed with a result saying it was stopped, its changes
// discarded), refuses calls from then on with ErrServerClosed, and ends
// every client session. It does not close the host.Session, which the
// caller closes once Close returns.
func (s *Server) Close() {
	s.close(ErrServerClosed)
	for ss := range s.srv.Sessions() {
		ss.Close()
	}
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
		ask := approver(req.Session, nil)
		if s.sess.Asks(name, args) && canElicit(req.Session) {
			answer, ok := s.questions.answer(req.Params, name, args)
			if !ok {
				return s.questions.ask(name, args, s.sess.ID()), nil
			}
			ask = approver(req.Session, answer)
		}
		ctx, stop := s.callContext(ctx)
		defer stop()
		out, err := s.call(ctx, req, name, args, ask)
		if err != nil {
			return nil, callError(err)
		}
		if changes {
			s.res.sync(ctx)
		}
		return result(out), nil
	}
}

// callContext is the context of a call: the request's, ended also by
// Close, or when the serving of the client (Run's or ServeIO's context)
// ends.
func (s *Server) callContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stops := []func() bool{context.AfterFunc(s.closed, func() { cancel(context.Cause(s.closed)) })}
	if serving, ok := ctx.Value(servingKey{}).(context.Context); ok {
		stops = append(stops, context.AfterFunc(serving, func() { cancel(context.Cause(serving)) }))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel(nil)
	}
}

// call makes the call once the calls before it are done, and tells a
// client that asked for progress when it starts and then how long it has
// run.
func (s *Server) call(ctx context.Context, req *sdk.CallToolRequest, name string, args json.RawMessage, ask host.Approver) (*host.CallOutcome, error) {
	select {
	case <-s.turn:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	defer func() { s.turn <- struct{}{} }()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	stop := s.reportProgress(ctx, req, name)
	defer stop()
	return s.sess.Call(ctx, name, args, ask)
}

// callError is the JSON-RPC error a call's failure is answered with.
func callError(err error) error {
	code := int64(jsonrpc.CodeInternalError)
	switch {
	case errors.Is(err, host.ErrSessionPaused):
		code = CodeSessionPaused
	case errors.Is(err, host.ErrSessionBroken):
		code = CodeSessionBroken
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}

// codeResourceErrors gives a failed resources/read its code: invalid
// params when the URI names no regular file of the workspace or one too
// large, internal error when the server could not read what it names.
// (The SDK answers an error without a code with code 0.)
func (s *Server) codeResourceErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		p, ok := req.GetParams().(*sdk.ReadResourceParams)
		var coded *jsonrpc.Error
		if err == nil || !ok || p == nil || errors.As(err, &coded) {
			return res, err
		}
		code := int64(jsonrpc.CodeInternalError)
		if s.res.uriFault(p.URI) {
			code = jsonrpc.CodeInvalidParams
		}
		return nil, &jsonrpc.Error{Code: code, Message: err.Error()}
	}
}

// uriFault reports whether what uri names is why it could not be read:
// no file of the workspace, not a regular file, or one over
// MaxResourceSize.
func (r *resources) uriFault(uri string) bool {
	rel, err := r.relPath(uri)
	if err != nil {
		return true
	}
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return false
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	return err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxResourceSize
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
