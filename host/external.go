package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/sandbox"
)

// MCPServer is one entry of an agent file's `mcp:` list: a Model Context
// Protocol server whose tools the model may call beside the wasm tools.
// It is started as a command (stdio) or reached at a URL (Streamable
// HTTP).
//
//	mcp:
//	  - {name: github, command: [github-mcp-server, stdio], env: [GITHUB_TOKEN]}
//	  - {name: docs, url: "https://docs.example.com/mcp", headers: {Authorization: "Bearer ..."}}
//
// Its tools run outside the sandbox: cairn cannot stage, undo or even see
// what they change. So they are labelled unsandboxed, a call of one is
// put to a person unless an approval rule allows it, and a call in flight
// when cairn stopped is sealed with its effects unknown.
type MCPServer struct {
	Name    string   `yaml:"name" json:"name"`
	Command []string `yaml:"command" json:"command,omitempty"`
	// Env lists the variables the command gets: NAME passes cairn's own
	// value, NAME=VALUE sets one. The command gets no other variable but
	// PATH and HOME.
	Env     []string          `yaml:"env" json:"env,omitempty"`
	URL     string            `yaml:"url" json:"url,omitempty"`
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
}

func (s MCPServer) validate() error {
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, " /"):
		return fmt.Errorf("name %q: want a short name without spaces or slashes", s.Name)
	case (len(s.Command) == 0) == (s.URL == ""):
		return errors.New("want one of command: [PROGRAM, ARGS...] or url: URL")
	case s.URL != "":
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("url %q: want an http or https URL", s.URL)
		}
	}
	return nil
}

// ExternalTools is a connection to an MCP server: the tools it offers and
// a way to call them. host/mcp.Connect makes one. Call is safe for
// concurrent use.
type ExternalTools interface {
	Tools() []ExternalTool
	// Call calls a tool; isError says the server answered with an error
	// result. An error says the server could not be reached or died:
	// one wrapping ErrNotSent, that the call never reached it; one
	// wrapping ErrOutputLimit, that its answer was too large to read.
	Call(ctx context.Context, name string, input json.RawMessage) (output string, isError bool, err error)
	Close() error
}

// ExternalTool is one tool of an MCP server.
type ExternalTool struct {
	Name, Description string
	InputSchema       json.RawMessage
}

// Connector connects to an agent file's MCP server; dir is the agent
// file's directory, which a relative command is resolved against, and
// limits bound one call of its tools (the agent file's sandbox timeout
// and output, the defaults filled in): a connector reads no answer much
// larger than limits.Output. The caller bounds ctx.
type Connector func(ctx context.Context, s MCPServer, dir string, limits Limits) (ExternalTools, error)

// ErrMCPServer: an MCP server of the agent file could not be started or
// reached, or there is no Connector to reach it with.
var ErrMCPServer = errors.New("MCP server unavailable")

// ErrNotSent: a call of an MCP server's tool was not sent, since the
// server could not be reached (the connection had ended and could not be
// made again, or a url server's address refused it); it changed nothing.
var ErrNotSent = errors.New("call not sent")

// ErrOutputLimit: an MCP server answered a call with more than the
// agent file's sandbox output limit; the answer was dropped.
var ErrOutputLimit = errors.New("output limit exceeded")

// errStartTime and errCallTime end a server's start and a call of its
// tool that ran past the time limit of a call.
var (
	errStartTime = errors.New("MCP server start ran past its time limit")
	errCallTime  = errors.New("MCP server call ran past its time limit")
)

// defaultOutputLimit is the sandbox's default cap on a tool's output
// (sandbox.Policy.StdoutLimit), which a server's answers share.
const defaultOutputLimit = 1 << 20

// serverLimits bound a call of an MCP server's tool, and its start: the
// agent file's sandbox timeout and output limit, as for a wasm tool, or
// the sandbox's defaults.
func serverLimits(af *AgentFile) Limits {
	l := Limits{Timeout: Duration(sandbox.DefaultTimeout), Output: defaultOutputLimit}
	return l.overriddenBy(Limits{Timeout: af.Sandbox.Timeout, Output: af.Sandbox.Output})
}

// unsandboxedLabel labels the tools of MCP servers, in their descriptions.
const unsandboxedLabel = "[unsandboxed: MCP server %s] "

// addServers connects to the agent file's MCP servers and offers their
// tools. A server that cannot be reached, or is not started and listing
// its tools within the time limit of a call, fails the whole set: the run
// does not start, and starts again (on resume) with the server.
func (ts *toolset) addServers(ctx context.Context, connect Connector, af *AgentFile) error {
	limits := serverLimits(af)
	for _, s := range af.MCP {
		if connect == nil {
			return fmt.Errorf("mcp server %s: %w: this engine has no MCP client", s.Name, ErrMCPServer)
		}
		conn, err := connectServer(ctx, connect, s, af.Dir, limits)
		if err != nil {
			return fmt.Errorf("mcp server %s: %w: %w", s.Name, ErrMCPServer, err)
		}
		ts.servers = append(ts.servers, conn)
		for _, et := range conn.Tools() {
			if err := ts.addExternal(s.Name, conn, et, limits); err != nil {
				return fmt.Errorf("mcp server %s: %w", s.Name, err)
			}
		}
	}
	return nil
}

// connectServer connects to s within the time limit of a call, saying
// what to check of a server that does not answer in time.
func connectServer(ctx context.Context, connect Connector, s MCPServer, dir string, limits Limits) (ExternalTools, error) {
	d := time.Duration(limits.Timeout)
	cctx, cancel := context.WithTimeoutCause(ctx, d, errStartTime)
	defer cancel()
	conn, err := connect(cctx, s, dir, limits)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && errors.Is(context.Cause(cctx), errStartTime) {
		check := fmt.Sprintf("that `%s` starts an MCP server that speaks on its stdin and stdout (its stderr is cairn's)", strings.Join(s.Command, " "))
		if s.URL != "" {
			check = fmt.Sprintf("that %s answers MCP over Streamable HTTP", s.URL)
		}
		return nil, fmt.Errorf("it did not start and list its tools within %s, the time limit of a call (the agent file's sandbox: {timeout}); check %s: %w", d, check, err)
	}
	return conn, err
}

func (ts *toolset) addExternal(server string, conn ExternalTools, et ExternalTool, limits Limits) error {
	if _, dup := ts.tools[et.Name]; dup {
		return fmt.Errorf("tool %q is offered by two modules or servers", et.Name)
	}
	schema := string(et.InputSchema)
	if schema == "" {
		schema = `{"type":"object"}`
	}
	sch, err := compileSchema(et.Name, schema)
	if err != nil {
		return fmt.Errorf("tool %q: %w", et.Name, err)
	}
	desc := fmt.Sprintf(unsandboxedLabel, server) + et.Description
	ts.tools[et.Name] = &tool{spec: abi.Tool{Name: et.Name, Description: desc, InputSchema: schema},
		schema: sch, remote: conn, server: server, limits: limits}
	ts.specs = append(ts.specs, model.Tool{Name: et.Name, Description: desc, InputSchema: json.RawMessage(schemaText(schema))})
	return nil
}

// callRemote calls a tool of an MCP server within the time limit of a
// call, its answer capped at the output limit, as a wasm tool's are (see
// serverLimits). Whatever goes wrong is an error result the model reads,
// saying whether the call reached the server (see remoteFailure).
func (t *tool) callRemote(ctx context.Context, c conversation.ToolCall) (string, error) {
	input, err := t.schema.check(c.Input)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	cctx, cancel := context.WithTimeoutCause(ctx, time.Duration(t.limits.Timeout), errCallTime)
	defer cancel()
	out, isError, err := t.remote.Call(cctx, c.Name, json.RawMessage(input))
	if err == nil && int64(len(out)) > int64(t.limits.Output) {
		err = fmt.Errorf("%w: its answer has %d bytes", ErrOutputLimit, len(out))
	}
	switch {
	case err != nil:
		return "", t.remoteFailure(ctx, cctx, c.Name, err)
	case isError:
		return "", errors.New(out)
	}
	return out, nil
}

// remoteFailure says what became of a call of an MCP server that did not
// answer: never sent (it changed nothing), stopped by cairn (a cancel or
// a signal) or by its time limit, its answer too large, or the server
// failed during it; of a call that was sent, what it changed is unknown.
func (t *tool) remoteFailure(ctx, cctx context.Context, name string, err error) error {
	switch {
	case errors.Is(err, ErrNotSent) && ctx.Err() != nil:
		return fmt.Errorf("%s: cairn stopped the call (%v) before it was sent to MCP server %s; it changed nothing", name, context.Cause(ctx), t.server)
	case errors.Is(err, ErrNotSent):
		return fmt.Errorf("MCP server %s is unavailable, so the call was not sent and changed nothing: %w", t.server, err)
	case ctx.Err() != nil:
		return fmt.Errorf("%s: cairn stopped the call (%v) before MCP server %s answered, and told the server to cancel it; what the call changed is unknown",
			name, context.Cause(ctx), t.server)
	case errors.Is(context.Cause(cctx), errCallTime):
		return fmt.Errorf("%s: it ran past its time limit of %s and was stopped (MCP server %s was told to cancel it); what the call changed is unknown (the agent file's sandbox: {timeout} sets the limit)",
			name, time.Duration(t.limits.Timeout), t.server)
	case errors.Is(err, ErrOutputLimit):
		return fmt.Errorf("%s: MCP server %s answered with more than the output limit of %d bytes, and the answer was dropped (%w); the call ran, but what it returned is lost (the agent file's sandbox: {output} raises the limit)",
			name, t.server, int64(t.limits.Output), err)
	}
	return fmt.Errorf("MCP server %s failed during the call, so what the call changed is unknown: %w", t.server, err)
}

// serverInfo is an MCP server as `cairn tools ls` lists it: its tools are
// known only once it runs, and listing must run nothing, so it is one
// entry that says what it is.
func serverInfo(s MCPServer) ToolInfo {
	where := s.URL
	if where == "" {
		where = strings.Join(s.Command, " ")
	}
	return ToolInfo{Module: "mcp:" + s.Name, Tool: abi.Tool{Name: s.Name + "/*",
		Description: fmt.Sprintf(unsandboxedLabel, s.Name) + "the tools of the MCP server at " + where +
			", listed when it starts; they run outside the sandbox and ask a person unless an approval rule allows them"}}
}

// actionOf is what the approval rules do with a call: the first matching
// rule's action, else allow, except for a tool outside the sandbox, which
// runs only when a rule or a person allows it.
func (r *run) actionOf(c conversation.ToolCall) (Action, int) {
	action, rule := decide(r.af.Approvals, c)
	if rule < 0 && r.tools.unsandboxed(c.Name) {
		action = ActionAsk
	}
	return action, rule
}

// unsandboxed reports whether a call's tool runs outside the sandbox.
func (ts *toolset) unsandboxed(name string) bool {
	t, ok := ts.tools[name]
	return ok && t.remote != nil
}

// closeServers ends the connections to the MCP servers.
func (ts *toolset) closeServers() error {
	if ts == nil {
		return nil
	}
	var errs []error
	for _, s := range ts.servers {
		errs = append(errs, s.Close())
	}
	ts.servers = nil
	return errors.Join(errs...)
}
