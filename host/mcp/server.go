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
	"slices"
	"strings"
	"sync"
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
	// SessionIdle is how long an HTTP session may go with no request of
	// its client open (no POST being served, no standalone stream held)
	// before the server closes it; zero means DefaultSessionIdle, and a
	// negative one never.
	SessionIdle time.Duration
}

// DefaultSessionIdle is how long an HTTP session may go idle by default.
const DefaultSessionIdle = time.Hour

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

// ErrServerClosed: a call came after Close, or Close stopped it, while it
// waited for its turn or ran. (A call stopped while it ran has its round
// committed with a result saying so; the error says the round.)
var ErrServerClosed = errors.New("the MCP server was closed")

// ErrServerStopped: the serving of a client ended (the end of Run's or
// ServeIO's context: a signal to `cairn mcp`) while its call waited for
// its turn or its approval question's answer, or ran, and stopped it.
var ErrServerStopped = errors.New("the MCP server stopped serving this client")

// ErrClientGone: the client went away while its call waited for its
// turn or its approval question's answer, or ran, and the call was
// stopped, as its cancellation would stop it: on stdio, a write to it
// failed (its end of the pipe closed); over HTTP, its request ended
// (its connection closed) before it was answered.
var ErrClientGone = errors.New("the MCP client went away")

// errSessionDeleted stops the calls of a client session that the client
// ended (HTTP DELETE); nobody awaits their answers.
var errSessionDeleted = errors.New("the MCP client ended its session (HTTP DELETE)")

// errClientCancelled stops a call whose client cancelled its request
// (notifications/cancelled).
var errClientCancelled = errors.New("the MCP client cancelled it (notifications/cancelled)")

// errSessionIdle stops the calls of a client session the server closed
// for its client left it idle (see closeIdle); nobody awaits their
// answers.
var errSessionIdle = errors.New("the MCP session was closed: its client left it idle")

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
	// ends are the contexts of the client sessions that made calls, each
	// ended when its client ends the session (see endSession).
	mu   sync.Mutex
	ends map[*sdk.ServerSession]sessionEnd
	// posts counts the HTTP POSTs being served (see Handler): Close lets
	// them end, each with the answers to its requests, before it ends the
	// sessions.
	posts atomic.Int64
	// answered is when the last POST ended (Unix nanoseconds): Close
	// keeps the clients' standalone streams open answerRead past it.
	answered atomic.Int64
	// postCtxs are the contexts of the POSTs being served, by the name
	// countPosts gives each.
	postCtxs sync.Map
	// uses are the HTTP sessions' uses, by session id (see closeIdle).
	uses     map[string]*sessionUse
	idleOnce sync.Once
}

type sessionEnd struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
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
	if opts.SessionIdle == 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "cairn", Title: "cairn sandboxed tools", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions(sess)})
	s := &Server{sess: sess, srv: srv, opts: opts, turn: make(chan struct{}, 1), ends: map[*sdk.ServerSession]sessionEnd{},
		uses: map[string]*sessionUse{}}
	s.turn <- struct{}{}
	s.closed, s.close = context.WithCancelCause(context.Background())
	srv.AddReceivingMiddleware(s.codeErrors)
	for _, t := range sess.Tools() {
		tool, err := mcpTool(t)
		if err == nil {
			err = addTool(srv, tool, s.handler(t.Name, s.sess.ServerOf(t.Name), !tool.Annotations.ReadOnlyHint))
		}
		if err != nil {
			return nil, err
		}
	}
	res, err := newResources(srv, sess.Workspace(), opts.MaxResources)
	if err != nil {
		return nil, err
	}
	s.res = res
	return s, nil
}

// instructions tell a client where the session's tools run: in the
// sandbox on the workspace, or, for an MCP server's, outside it.
func instructions(sess *host.Session) string {
	var servers []string
	sandboxed := 0
	for _, t := range sess.Tools() {
		switch server := sess.ServerOf(t.Name); {
		case server == "":
			sandboxed++
		case !slices.Contains(servers, server):
			servers = append(servers, server)
		}
	}
	id, ws := sess.ID(), sess.Workspace()
	outside := fmt.Sprintf("the tools of MCP servers (%s), whose descriptions begin [unsandboxed: MCP server NAME], "+
		"run outside cairn's sandbox, wherever their server runs: cairn cannot stage, show or undo what they change",
		strings.Join(servers, ", "))
	switch {
	case len(servers) == 0:
		return fmt.Sprintf("These tools run in cairn's WebAssembly sandbox on the workspace %s. "+
			"Each call is journaled as a round of agent %s; a call's changes reach the workspace only after it finishes, "+
			"and `cairn diff %s` / `cairn undo %s` show and take back the last round's changes.", ws, id, id, id)
	case sandboxed == 0:
		return fmt.Sprintf("None of these tools runs in cairn's sandbox: %s. Each call is journaled as a round of agent %s (`cairn log %s`).",
			outside, id, id)
	}
	return fmt.Sprintf("The built-in tools and modules run in cairn's WebAssembly sandbox on the workspace %s; %s. "+
		"Each call is journaled as a round of agent %s; a sandboxed call's changes reach the workspace only after it finishes, "+
		"and `cairn diff %s` / `cairn undo %s` show and take back the last round's changes.", ws, outside, id, id, id)
}

// ServeIO serves one client speaking newline-delimited JSON-RPC on r and
// w (MCP's stdio transport) until it closes r or ctx ends; when ctx ends,
// the client's calls in flight stop first. A message longer than
// maxStdioMessage, or a line that is not a JSON-RPC message the SDK takes,
// is answered with an error and the session goes on (see messageCheck).
//
// A request read is answered before the session ends: at the end of r,
// once every request read has been (each call bounded by its time limit);
// when ctx ends, once the calls it stopped have been, within stopGrace.
// The answer to a request the client cancelled is not written, and a
// request before initialize, or with an id in use by one in flight, is
// refused (see exchange). A write to w that fails says the client is
// gone: its calls in flight stop (ErrClientGone), and ServeIO returns
// nil.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	x := newExchange()
	// The client is gone once a write to it fails: its calls stop, as
	// the end of ctx stops them, and the session ends.
	serving, gone := context.WithCancelCause(ctx)
	defer gone(nil)
	lw := &lockedWriter{w: w, failed: func(err error) { // the SDK's messages and the answers to lines refused
		x.fail()
		gone(fmt.Errorf("%w: writing to it failed (%v)", ErrClientGone, err))
	}}
	var session atomic.Pointer[sdk.ServerSession]
	in := newLineLimiter(r, lw, maxStdioMessage)
	in.check = (&messageCheck{batches: func() bool { return takesBatches(session.Load()) }, x: x}).check
	// stop ends a wait for the answers at the end of the input: the calls
	// are being stopped (ctx, Close), or the session is over.
	stop := make(chan struct{})
	closeStop := sync.OnceFunc(func() { close(stop) })
	defer closeStop()
	defer context.AfterFunc(ctx, closeStop)()
	defer context.AfterFunc(s.closed, closeStop)()
	// A client whose input ended may be gone, its end of w closed too:
	// calls that write nothing before their answers would not find it.
	probe := func() {
		if outputClosed(w) {
			lw.failed(errors.New("its end of the output is closed"))
		}
	}
	in.drain = func() []byte { return x.drain(stop, probe) }
	ss, err := s.connect(serving, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{exchangeWriter{w: lw, x: x}},
		MaxLineLength: maxStdioMessage + 1<<10})
	if err != nil {
		return err
	}
	session.Store(ss)
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err := <-done:
		return err
	case <-serving.Done():
	}
	if ctx.Err() == nil {
		// The client is gone: nothing more can reach it.
		ss.Close()
		<-done
		return nil
	}
	// The calls stop (see callContext); their answers, which say so, are
	// written before the session closes, which writes nothing more.
	x.settle(stopGrace)
	ss.Close()
	<-done
	return ctx.Err()
}

// stopGrace bounds how long, once ServeIO's context ends, the answers to
// the calls it stopped are waited for.
const stopGrace = 10 * time.Second

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
// every client session: over HTTP, once the requests being served have
// been answered (the calls stopped with an error that says so), within
// stopGrace, and answerRead after the last answer was written, for its
// client to read it. It does not close the host.Session, which the
// caller closes once Close returns.
func (s *Server) Close() {
	s.close(ErrServerClosed)
	s.closeSessions()
}

// Stop is Close for cause, why the server stops (a signal): the calls it
// stops are answered, and their results say, that the server stopped
// serving their clients for cause (ErrServerStopped), as the end of
// ServeIO's context says on stdio.
func (s *Server) Stop(cause error) {
	s.close(fmt.Errorf("%w (%v)", ErrServerStopped, cause))
	s.closeSessions()
}

// closeSessions is Close once the server is closed.
func (s *Server) closeSessions() {
	for deadline := time.Now().Add(stopGrace); s.posts.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if wait := time.Until(time.Unix(0, s.answered.Load()).Add(answerRead)); wait > 0 {
		time.Sleep(min(wait, answerRead))
	}
	for ss := range s.srv.Sessions() {
		ss.Close()
	}
}

// answerRead is how long, after the last answer over HTTP was written,
// Close keeps the client sessions, and so their standalone SSE streams,
// open: the SDK's client fails its session, and every call it awaits,
// once that stream ends, even a call whose answer reached it on the
// call's own stream and waits to be read.
const answerRead = time.Second

// mcpTool describes a tool to MCP clients: its schema as declared, and
// hints from its manifest and grant. A sandboxed tool is closed-world:
// the sandbox gives it the workspace and nothing else, unless its grant
// lets it reach the network, which may also let it change what is there
// (by POST, PUT, PATCH, DELETE...). An MCP server's tool, which runs
// outside it, may do anything.
func mcpTool(t host.SessionTool) (*sdk.Tool, error) {
	var schema map[string]any
	if err := json.Unmarshal(t.Schema, &schema); err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	if schema["type"] == nil {
		schema["type"] = "object"
	}
	readOnly := !t.Mutates && t.Needs.Workspace != abi.AccessReadWrite && !t.Unsandboxed && !t.NetMutates
	openWorld := t.Unsandboxed || t.Net
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

// addTool adds tool to srv. The SDK panics at a tool it refuses (an
// input schema's x-mcp-header that is not a header's name, or on a
// property that is not a string, a number or a boolean): a tool's schema
// is a module's or a server's, untrusted, so that is an error naming it.
func addTool(srv *sdk.Server, tool *sdk.Tool, h sdk.ToolHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s cannot be served over MCP: %v; leave it out (only: in the agent file) or change its input schema", tool.Name, p)
		}
	}()
	srv.AddTool(tool, h)
	return nil
}

// handler runs a tools/call as a round of the session; server is the MCP
// server the tool runs on, "" for a sandboxed one. After a call of a tool
// that may change the workspace, the resources are listed anew.
func (s *Server) handler(name, server string, changes bool) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := json.RawMessage(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		ctx, stop := s.callContext(ctx, req.Session, s.postContext(req))
		defer stop()
		why := s.askWhy(name, server, args)
		ask := approver(req.Session, nil, why)
		if s.sess.Asks(name, args) && canElicit(req.Session) {
			if !takesRoundTrips(req.Session) {
				return s.askNow(ctx, req, name, server, args, why, changes)
			}
			answer, ok := s.questions.answer(req.Params, name, args)
			if !ok {
				return s.questions.ask(name, args, why), nil
			}
			ask = approver(req.Session, answer, why)
		}
		out, err := s.call(ctx, req, name, server, args, ask)
		return s.answer(ctx, out, err, false, changes)
	}
}

// answer is the MCP answer to a call that came to out, or failed with
// err; asked: a stop came while it waited for its approval question's
// answer (see stoppedCall); changes: the resources are listed anew.
func (s *Server) answer(ctx context.Context, out *host.CallOutcome, err error, asked, changes bool) (*sdk.CallToolResult, error) {
	if err != nil {
		return nil, callError(err)
	}
	if err := s.stoppedCall(ctx, out, asked); err != nil {
		return nil, err
	}
	if changes {
		s.res.sync(ctx)
	}
	return s.fitted(result(out), out), nil
}

// askWhy says why a call of name with args would be put to a person: an
// approval rule says so, or, for a tool of an MCP server no rule matches,
// it runs outside the sandbox.
func (s *Server) askWhy(name, server string, args json.RawMessage) askReason {
	if server != "" && s.sess.AskedByDefault(name, args) {
		return askReason{unsandboxed: true, server: server, agent: s.sess.ID(), tool: name}
	}
	return askReason{agent: s.sess.ID(), tool: name}
}

// callContext is the context of a call: the request's, ended also by
// Close, when the serving of the client (Run's or ServeIO's context) ends
// or the client is gone (ErrClientGone), when the client ends its
// session ss (see endSession), or when post, the HTTP request the call
// came in (nil for none), ends before the call is answered: its client
// went away, and nobody awaits the answer (the server keeps no events
// for a client to resume a stream with).
//
// Each gives the call's context its cause, which the call's result
// names: the request's own end is the client's cancellation
// (errClientCancelled) unless one of the others came first.
func (s *Server) callContext(ctx context.Context, ss *sdk.ServerSession, post context.Context) (context.Context, func()) {
	req := ctx
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	var causes []func() error
	stopWith := func(end context.Context, cause func() error) func() bool {
		causes = append(causes, func() error {
			if end.Err() == nil {
				return nil
			}
			return cause()
		})
		return context.AfterFunc(end, func() { cancel(cause()) })
	}
	stops := []func() bool{stopWith(s.closed, func() error { return context.Cause(s.closed) })}
	if post != nil {
		stops = append(stops, stopWith(post, func() error {
			return fmt.Errorf("%w: its HTTP request ended before it was answered", ErrClientGone)
		}))
	}
	if serving, ok := ctx.Value(servingKey{}).(context.Context); ok {
		stops = append(stops, stopWith(serving, func() error {
			if cause := context.Cause(serving); errors.Is(cause, ErrClientGone) {
				return cause
			}
			return fmt.Errorf("%w (%v)", ErrServerStopped, context.Cause(serving))
		}))
	}
	if ss != nil {
		end := s.sessionEnd(ss)
		stops = append(stops, stopWith(end, func() error { return context.Cause(end) }))
	}
	stops = append(stops, context.AfterFunc(req, func() {
		for _, cause := range causes {
			if err := cause(); err != nil {
				cancel(err)
				return
			}
		}
		if cause := context.Cause(req); cause != context.Canceled {
			cancel(cause)
			return
		}
		cancel(errClientCancelled)
	}))
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel(nil)
	}
}

// sessionEnd is the context that ends when the client ends ss, made once
// for each client session that makes a call and forgotten when it ends.
func (s *Server) sessionEnd(ss *sdk.ServerSession) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if end, ok := s.ends[ss]; ok {
		return end.ctx
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	s.ends[ss] = sessionEnd{ctx: ctx, cancel: cancel}
	go func() {
		ss.Wait()
		s.mu.Lock()
		delete(s.ends, ss)
		s.mu.Unlock()
		cancel(nil)
	}()
	return ctx
}

// endSession stops, at once, with cause, the calls of the client session
// whose id is id, which is ending: the SDK closes a session only once its
// calls have returned.
func (s *Server) endSession(id string, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss, end := range s.ends {
		if ss.ID() == id {
			end.cancel(cause)
		}
	}
}

// stoppedCall is the error that answers a call the server stopped while
// it ran, or, asked, while it waited for its approval question's answer
// (Close, or the end of the serving of its client): the client is told
// that the server stopped, and what became of the call.
func (s *Server) stoppedCall(ctx context.Context, out *host.CallOutcome, asked bool) error {
	cause := context.Cause(ctx)
	if ctx.Err() == nil || !out.IsError || !(errors.Is(cause, ErrServerStopped) || errors.Is(cause, ErrServerClosed)) {
		return nil
	}
	what := "ran: it was stopped, its changes discarded,"
	if asked {
		what = "waited for the answer to its approval question: it was denied and did not run,"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
		"%v while the call %s and its round (%d, call %s) committed with the result %q; `cairn log %s` shows it, and `cairn mcp --id %s` serves the agent again",
		cause, what, out.Round, out.Call, cut(out.Output, 1000), s.sess.ID(), s.sess.ID())}
}

// call makes the call once the calls before it are done, and tells a
// client that asked for progress when its tool starts and then how long
// it has run.
func (s *Server) call(ctx context.Context, req *sdk.CallToolRequest, name, server string, args json.RawMessage, ask host.Approver) (*host.CallOutcome, error) {
	select {
	case <-s.turn:
	case <-ctx.Done():
		return nil, notStarted(ctx)
	}
	defer func() { s.turn <- struct{}{} }()
	if ctx.Err() != nil {
		return nil, notStarted(ctx)
	}
	started, stop := s.reportProgress(ctx, req, name, server)
	defer stop()
	return s.sess.CallWith(ctx, name, args, host.CallOptions{Ask: ask, Started: started})
}

// notStarted is the error of a call whose ctx ended before its turn.
func notStarted(ctx context.Context) error {
	return fmt.Errorf("%w; the call did not start, and changed nothing", context.Cause(ctx))
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

// codeErrors gives a failed request the SDK answers with an error
// without a code (which it sends as code 0) its code: a second initialize
// of a session is an invalid request; a resources/read has invalid params
// when the URI names no regular file of the workspace or one too large,
// an internal error when the server could not read what it names. A
// logging/setLevel of a level MCP does not have, which the SDK takes, is
// refused with invalid params, as MCP asks.
func (s *Server) codeErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if level := logLevel(method, req); level != nil && !slices.Contains(logLevels, *level) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("invalid params: level %q is not one of MCP's: %s", *level, strings.Join(logLevels, ", "))}
		}
		res, err := next(ctx, method, req)
		var coded *jsonrpc.Error
		if err == nil || errors.As(err, &coded) {
			return res, err
		}
		if method == "initialize" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("invalid request: %v: a session is initialized once; a client that starts over opens a new session", err)}
		}
		p, ok := req.GetParams().(*sdk.ReadResourceParams)
		if !ok || p == nil {
			return res, err
		}
		code := int64(jsonrpc.CodeInternalError)
		if s.res.uriFault(p.URI) {
			code = jsonrpc.CodeInvalidParams
		}
		return nil, &jsonrpc.Error{Code: code, Message: err.Error()}
	}
}

// logLevels are MCP's logging levels, least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logLevel is the level a logging/setLevel request, req, asks for; nil
// for a request of another method.
func logLevel(method string, req sdk.Request) *string {
	if method != "logging/setLevel" {
		return nil
	}
	var p struct {
		Level string `json:"level"`
	}
	b, _ := json.Marshal(req.GetParams())
	json.Unmarshal(b, &p)
	return &p.Level
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

// maxResult bounds the JSON of a call's result sent to a client: an
// answer on stdio is one line, and the SDK's client, as cairn itself,
// reads no line over maxStdioMessage (an agent file's sandbox: {output}
// may allow more). Room is left for the answer's envelope.
const maxResult = maxStdioMessage - 64<<10

// fitted is res, the result of the call out, made to fit in maxResult:
// without its structured content, a copy of its text, if that is enough;
// else an error result saying that the result is journaled, where to
// read it, and how to ask for less.
func (s *Server) fitted(res *sdk.CallToolResult, out *host.CallOutcome) *sdk.CallToolResult {
	size := func() int {
		b, _ := json.Marshal(res)
		return len(b)
	}
	if len(out.Output) < maxResult/12 { // escaped (six bytes a byte at most) and copied, still within it
		return res
	}
	if res.StructuredContent != nil && size() > maxResult {
		res.StructuredContent = nil
	}
	n := size()
	if n <= maxResult {
		return res
	}
	outcome := "its result"
	if out.IsError {
		outcome = "its error"
	}
	return &sdk.CallToolResult{IsError: true, Meta: res.Meta, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(
		"call %s (round %d) ran, and %s (%d bytes of text, %d as JSON) is journaled, but it is more than the %d bytes an MCP answer carries here, so it is not sent: "+
			"`cairn log --json --round %d %s` has it whole; ask for less at a time (read_file's offset and limit, for one), or lower the agent file's sandbox: {output} so that such a call fails at once",
		out.Call, out.Round, outcome, len(out.Output), n, maxResult, out.Round, s.sess.ID())}}}
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
