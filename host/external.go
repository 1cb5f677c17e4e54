package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/host/model"
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
// a way to call them. host/mcp.Connect makes one.
type ExternalTools interface {
	Tools() []ExternalTool
	// Call calls a tool; isError says the server answered with an error
	// result. An error says the server could not be reached or died.
	Call(ctx context.Context, name string, input json.RawMessage) (output string, isError bool, err error)
	Close() error
}

// ExternalTool is one tool of an MCP server.
type ExternalTool struct {
	Name, Description string
	InputSchema       json.RawMessage
}

// Connector connects to an agent file's MCP server; dir is the agent
// file's directory, which a relative command is resolved against.
type Connector func(ctx context.Context, s MCPServer, dir string) (ExternalTools, error)

// ErrMCPServer: an MCP server of the agent file could not be started or
// reached, or there is no Connector to reach it with.
var ErrMCPServer = errors.New("MCP server unavailable")

// unsandboxedLabel labels the tools of MCP servers, in their descriptions.
const unsandboxedLabel = "[unsandboxed: MCP server %s] "

// addServers connects to the agent file's MCP servers and offers their
// tools. A server that cannot be reached fails the whole set: the run does
// not start, and starts again (on resume) with the server.
func (ts *toolset) addServers(ctx context.Context, connect Connector, af *AgentFile) error {
	for _, s := range af.MCP {
		if connect == nil {
			return fmt.Errorf("mcp server %s: %w: this engine has no MCP client", s.Name, ErrMCPServer)
		}
		conn, err := connect(ctx, s, af.Dir)
		if err != nil {
			return fmt.Errorf("mcp server %s: %w: %w", s.Name, ErrMCPServer, err)
		}
		ts.servers = append(ts.servers, conn)
		for _, et := range conn.Tools() {
			if err := ts.addExternal(s.Name, conn, et); err != nil {
				return fmt.Errorf("mcp server %s: %w", s.Name, err)
			}
		}
	}
	return nil
}

func (ts *toolset) addExternal(server string, conn ExternalTools, et ExternalTool) error {
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
		schema: sch, remote: conn, server: server}
	ts.specs = append(ts.specs, model.Tool{Name: et.Name, Description: desc, InputSchema: json.RawMessage(schemaText(schema))})
	return nil
}

// callRemote calls a tool of an MCP server. A server that fails mid-call
// is an error result the model reads, saying the call's effects are
// unknown.
func (t *tool) callRemote(ctx context.Context, c conversation.ToolCall) (string, error) {
	input, err := t.schema.check(c.Input)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	out, isError, err := t.remote.Call(ctx, c.Name, json.RawMessage(input))
	switch {
	case err != nil:
		return "", fmt.Errorf("MCP server %s failed during the call, so what the call changed is unknown: %w", t.server, err)
	case isError:
		return "", errors.New(out)
	}
	return out, nil
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
