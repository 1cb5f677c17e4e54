package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
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
	// Prefix is put before the name of each of the server's tools as the
	// model and the approval rules see them (prefix: fs_ offers the
	// server's read_file as fs_read_file); the server is called with its
	// own name. It keeps a server's tool from taking the name of another
	// tool.
	Prefix string `yaml:"prefix" json:"prefix,omitempty"`
	// Only, when set, picks these of the server's tools, by the server's
	// names; the rest are not offered.
	Only []string `yaml:"only" json:"only,omitempty"`
}

func (s MCPServer) validate() error {
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, " /"):
		return fmt.Errorf("name %q: want a short name without spaces or slashes", s.Name)
	case (len(s.Command) == 0) == (s.URL == ""):
		return errors.New("want one of command: [PROGRAM, ARGS...] or url: URL")
	case s.Prefix != "" && toolNameFault(s.Prefix+"x") != "":
		return fmt.Errorf("prefix %q: want at most %d letters, digits, _ and -", s.Prefix, maxToolName-1)
	case slices.Contains(s.Only, ""):
		return errors.New("only: a name is empty; list the server's tools by name")
	case s.URL != "":
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("url %q: want an http or https URL", s.URL)
		}
	}
	return nil
}

// maxToolName is the longest tool name model providers take (OpenAI's
// and Anthropic's ^[a-zA-Z0-9_-]{1,64}$).
const maxToolName = 64

// toolNameFault says why model providers would refuse a tool's name, or
// "" for a name they take.
func toolNameFault(name string) string {
	switch {
	case name == "":
		return "it has no name"
	case len(name) > maxToolName:
		return fmt.Sprintf("its name has %d bytes, more than %d", len(name), maxToolName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Sprintf("its name has %q in it", r)
		}
	}
	return ""
}

// schemaFault says why model providers would refuse a tool's input
// schema, or "" for one they take: a JSON object of type object, or one
// that names no type (MCP and cairn take it for an object). No schema at
// all is an object's too.
func schemaFault(schema json.RawMessage) string {
	text := bytes.TrimSpace(schema)
	if len(text) == 0 || string(text) == "null" {
		return ""
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(text, &doc) != nil {
		return fmt.Sprintf("its input schema is %s, not a JSON object", cut(string(text), 40))
	}
	if typ, ok := doc["type"]; ok && string(bytes.TrimSpace(typ)) != `"object"` {
		var compact bytes.Buffer
		if json.Compact(&compact, typ) != nil {
			compact.Write(typ)
		}
		return fmt.Sprintf(`its input schema is of type %s, not "object"`, cut(compact.String(), 40))
	}
	return ""
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
	// Refused, when not "", says why the MCP client will not call the
	// tool though the server listed it (an x-mcp-header of its input
	// schema it refuses): such a tool keeps the run from starting unless
	// only: leaves it out.
	Refused string
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
		offered, err := s.pick(conn.Tools())
		if err != nil {
			return fmt.Errorf("mcp server %s: %w", s.Name, err)
		}
		var remote ExternalTools = conn
		if s.Prefix != "" {
			remote = prefixed{ExternalTools: conn, prefix: s.Prefix}
		}
		for _, p := range offered {
			if err := ts.addExternal(s, remote, p, limits); err != nil {
				return fmt.Errorf("mcp server %s: %w", s.Name, err)
			}
		}
	}
	return nil
}

// pick is the tools of the server's to offer: those only: lists, or all
// of them. A tool whose name, with the prefix, or input schema model
// providers would refuse (they take a name of 1 to 64 letters, digits, _
// and -, and a schema of type object) keeps the run from starting, with
// the error naming it and how to leave it out: sent to a provider, it
// would fail every request of the run, and `cairn mcp` could not list it.
// So does a tool the MCP client refuses (Refused), which would otherwise
// be missing from the run without a word, and one whose input schema does
// not compile, against which no call could be checked.
func (s MCPServer) pick(tools []ExternalTool) ([]pickedTool, error) {
	names := make([]string, len(tools))
	listed := map[string]int{}
	for i, t := range tools {
		names[i] = t.Name
		listed[t.Name]++
	}
	for _, n := range names {
		if listed[n] > 1 && (len(s.Only) == 0 || slices.Contains(s.Only, n)) {
			others := slices.Compact(slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(names), func(o string) bool { return o == n }))))
			way := fmt.Sprintf("leave it out with only: [%s] (the server's other tools)", nameList(others))
			if len(others) == 0 {
				way = "remove the server from the agent file's mcp list (it has no other tool)"
			}
			return nil, fmt.Errorf("tool %q: the server lists it %d times, where a server's tools have names of their own (a fault of the server: check it); prefix: names the copies alike, so %s",
				cut(n, 80), listed[n], way)
		}
	}
	for _, n := range s.Only {
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("only: the server has no tool %q (it has %s)", n, nameList(names))
		}
	}
	var picked []pickedTool
	var faults, usable []string
	rule := ""
	for _, t := range tools {
		if len(s.Only) > 0 && !slices.Contains(s.Only, t.Name) {
			continue
		}
		why := toolNameFault(s.Prefix + t.Name)
		if why == "" {
			why = schemaFault(t.InputSchema)
		}
		if why != "" {
			rule = fmt.Sprintf(": model providers take a tool name of 1 to %d letters, digits, _ and -, and an input schema of type object", maxToolName)
		} else if t.Refused != "" {
			why = t.Refused + ", so the MCP client leaves the tool out (a fault of the server's: check it)"
		}
		text := externalSchema(t.InputSchema)
		var sch *schema
		if why == "" {
			var err error
			if sch, err = compileSchema(s.Prefix+t.Name, text); err != nil {
				why = fmt.Sprintf("its %v, so no call of it could be checked (a fault of the server's: check it)", err)
			}
		}
		if why != "" {
			faults = append(faults, fmt.Sprintf("tool %q: %s", cut(s.Prefix+t.Name, 80), why))
			continue
		}
		picked, usable = append(picked, pickedTool{ExternalTool: t, schema: sch, schemaText: text}), append(usable, t.Name)
	}
	if len(faults) > 0 && len(usable) == 0 {
		return nil, fmt.Errorf("%s%s, and the server has no other tool; remove the server from the agent file's mcp list",
			strings.Join(faults, "; "), rule)
	}
	if len(faults) > 0 {
		return nil, fmt.Errorf("%s%s; leave these tools out with only: [%s] (the server's other tools)",
			strings.Join(faults, "; "), rule, nameList(usable))
	}
	return picked, nil
}

// pickedTool is a tool of a server's that pick offers, with its input
// schema compiled.
type pickedTool struct {
	ExternalTool
	schema     *schema
	schemaText string
}

// externalSchema is the input schema of a server's tool: an object's
// when it has none, as MCP says.
func externalSchema(raw json.RawMessage) string {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return `{"type":"object"}`
	}
	return text
}

// nameList lists names for a message, the first 20 of them.
func nameList(names []string) string {
	if len(names) > 20 {
		return strings.Join(names[:20], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// cut shortens s to n bytes for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// prefixed is a server's connection whose tools are offered with a
// prefix: a call is sent with the server's own name.
type prefixed struct {
	ExternalTools
	prefix string
}

func (p prefixed) Call(ctx context.Context, name string, input json.RawMessage) (string, bool, error) {
	return p.ExternalTools.Call(ctx, strings.TrimPrefix(name, p.prefix), input)
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

// addExternal offers a tool of server s that pick offers, named with its
// prefix.
func (ts *toolset) addExternal(s MCPServer, conn ExternalTools, et pickedTool, limits Limits) error {
	name := s.Prefix + et.Name
	if _, dup := ts.tools[name]; dup {
		return fmt.Errorf("tool %q is offered by two modules or servers: give the server a prefix for its tools (prefix: %s_ offers this one as %s_%s) or leave the tool out (only: [the server's tools to offer])",
			name, s.Name, s.Name, name)
	}
	schema, sch := et.schemaText, et.schema
	desc := fmt.Sprintf(unsandboxedLabel, s.Name) + et.Description
	ts.tools[name] = &tool{spec: abi.Tool{Name: name, Description: desc, InputSchema: schema},
		schema: sch, remote: conn, server: s.Name, limits: limits}
	ts.specs = append(ts.specs, model.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schemaText(schema))})
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
	named := ""
	if s.Prefix != "" {
		named = ", each named with the prefix " + s.Prefix
	}
	return ToolInfo{Module: "mcp:" + s.Name, Tool: abi.Tool{Name: s.Name + "/*",
		Description: fmt.Sprintf(unsandboxedLabel, s.Name) + "the tools of the MCP server at " + where +
			", listed when it starts" + named + "; they run outside the sandbox and ask a person unless an approval rule allows them"}}
}

// actionOf is what the approval rules do with a call (see judge), and
// which rule decided it (-1 for none), an index of the approvals of the
// agent file whose rules decided.
func (r *run) actionOf(c conversation.ToolCall) (Action, int) {
	v := r.judge(c)
	return v.action, v.rule
}

// verdict is what the approval rules of an agent and of the agents above
// it do with a call.
type verdict struct {
	action Action
	// rule is the rule that decided, an index of by's approvals; -1 for
	// none (no rule matched: a call is allowed, or asked about if its tool
	// runs outside the sandbox).
	rule int
	// by is the agent file whose rules decided, up the number of agents
	// above the agent it is: 0 for its own.
	by *AgentFile
	up int
}

// judge is what the approval rules do with a call. The rules of the
// agent's own file and of each agent above it (its parent, its parent's
// parent: a sub-agent's agent file carries them, see AgentFile.parent)
// each give an action: the first matching rule's, else allow, except for a
// tool outside the sandbox, which runs only when a rule or a person allows
// it. The strictest holds, deny over ask over allow, and of two equally
// strict the nearer agent's: so a sub-agent's calls pass its own rules and
// every ancestor's, and delegating escapes no rule. A call its tool
// refuses before anything runs (refusesInput) is not put to a person:
// whatever they decided, it would fail with the same error, which the
// model then reads at once.
func (r *run) judge(c conversation.ToolCall) verdict {
	outside := r.tools.unsandboxed(c.Name)
	var v verdict
	up := 0
	for af := r.af; af != nil && up <= maxDepth; af, up = af.parent, up+1 {
		action, rule := decide(af.Approvals, c)
		if rule < 0 && outside {
			action = ActionAsk
		}
		if up == 0 || strictness(action) > strictness(v.action) {
			v = verdict{action: action, rule: rule, by: af, up: up}
		}
	}
	if v.action == ActionAsk && r.tools.refusesInput(c) {
		v.action = ActionAllow
	}
	return v
}

// strictness orders the actions: allow, ask, deny.
func strictness(a Action) int {
	switch a {
	case ActionDeny:
		return 2
	case ActionAsk:
		return 1
	}
	return 0
}

// refusesInput reports whether a call fails before its tool runs: a tool
// of that name there is not, or arguments its input schema refuses.
func (ts *toolset) refusesInput(c conversation.ToolCall) bool {
	t, ok := ts.tools[c.Name]
	if !ok {
		return true
	}
	_, err := t.schema.check(c.Input)
	return err != nil
}

// unsandboxed reports whether a call's tool runs outside the sandbox
// (see toolset.unstarted).
func (ts *toolset) unsandboxed(name string) bool {
	t, ok := ts.tools[name]
	return ok && t.remote != nil || !ok && ts.unstarted
}

// ServerOf is the MCP server a tool of the session runs on, outside the
// sandbox; "" for a tool that runs in the sandbox (or none of that name).
func (s *Session) ServerOf(tool string) string {
	if t, ok := s.r.tools.tools[tool]; ok && t.remote != nil {
		return t.server
	}
	return ""
}

// AskedByDefault reports whether a call of tool with input is put to a
// person although no approval rule matches it: the tool runs outside the
// sandbox, and such a call is asked about unless a rule allows it.
func (s *Session) AskedByDefault(tool string, input json.RawMessage) bool {
	v := s.r.judge(conversation.ToolCall{Name: tool, Input: string(input)})
	return v.action == ActionAsk && v.rule < 0
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
