package host

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/netguard"
)

// narrows checks that the sub-agent's tools, grants, limits and MCP
// servers narrow its parent's, naming the line to change when they do
// not.
func (s *subAgent) narrows(parent *AgentFile) error {
	for i, ref := range s.af.Tools {
		p, ok := parentRef(parent, s.af, ref)
		if !ok {
			return fmt.Errorf("%s: sub-agent %s: tool module %s is not one of its parent's tools; "+
				"a sub-agent's tools can only narrow its parent's: remove it, or give it to the parent too", s.toolLine(i), s.Name, ref.Module)
		}
		if missing := wider(parent, s.af, p, ref); len(missing) > 0 {
			return fmt.Errorf("%s: sub-agent %s: tool module %s asks for %s, which its parent's grant does not have; "+
				"a sub-agent's grants can only narrow its parent's: take it out, or grant it to the parent too",
				s.toolLine(i), s.Name, ref.Module, strings.Join(missing, ", "))
		}
		if more := widerLimits(parent.Sandbox.overriddenBy(p.Limits), s.af.Sandbox.overriddenBy(ref.Limits)); len(more) > 0 {
			return fmt.Errorf("%s: sub-agent %s: tool module %s would run with %s; "+
				"a sub-agent's sandbox limits can only narrow its parent's: lower them in its sandbox: or in this entry's limits: "+
				"(a limit this entry leaves out is the sub-agent's sandbox: value, or, where that leaves it out too, "+
				"the one its parent's entry for the module runs with)", s.toolLine(i), s.Name, ref.Module, strings.Join(more, ", "))
		}
	}
	if m := s.af.Memory; m != "" && m != parent.Memory {
		return fmt.Errorf("%s: sub-agent %s: memory %q is not its parent's memory namespace; "+
			"a sub-agent's tools can only narrow its parent's: name the parent's namespace, or give the parent memory %q too",
			s.where, s.Name, m, m)
	}
	for i, m := range s.af.MCP {
		if err := s.narrowsServer(parent, i, m); err != nil {
			return err
		}
	}
	return nil
}

// narrowsServer checks the sub-agent's i-th MCP server: it must be one of
// its parent's (the same name, command or URL), offering its tools under
// the same prefix, no tool the parent's only: leaves out, no variable or
// header the parent's entry does not give it, and its calls bound by the
// parent's time and output limits.
func (s *subAgent) narrowsServer(parent *AgentFile, i int, m MCPServer) error {
	var missing []string
	found := false
	for _, p := range parent.MCP {
		if !sameServer(p, m) {
			continue
		}
		more := widerServer(p, m)
		if !found || len(more) < len(missing) {
			missing = more
		}
		found = true
	}
	if !found {
		return fmt.Errorf("%s: sub-agent %s: MCP server %s is not one of its parent's (the same name and command or url); "+
			"a sub-agent's tools can only narrow its parent's", s.mcpLine(i), s.Name, m.Name)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: sub-agent %s: MCP server %s asks for %s, which its parent's entry for it does not have; "+
			"a sub-agent's MCP servers can only narrow its parent's: take it out, or give it to the parent too",
			s.mcpLine(i), s.Name, m.Name, strings.Join(missing, ", "))
	}
	if more := widerLimits(serverLimits(parent), serverLimits(s.af)); len(more) > 0 {
		return fmt.Errorf("%s: sub-agent %s: MCP server %s: its calls would run with %s; "+
			"a sub-agent's sandbox limits can only narrow its parent's: lower them in its sandbox: "+
			"(a limit it leaves out is the default)", s.mcpLine(i), s.Name, m.Name, strings.Join(more, ", "))
	}
	return nil
}

// parentRef finds the parent's entry for the module a sub-agent's tool
// entry names.
func parentRef(parent, child *AgentFile, ref ToolRef) (ToolRef, bool) {
	for _, p := range parent.Tools {
		if moduleKey(parent, p) == moduleKey(child, ref) {
			return p, true
		}
	}
	return ToolRef{}, false
}

// moduleKey is the module a tool entry names, resolved: an embedded
// module (the built-in tools, fetch) or a file's absolute path.
func moduleKey(af *AgentFile, ref ToolRef) string {
	if EmbeddedModule(ref.Module) {
		return ref.Module
	}
	return af.resolve(ref.Module)
}

// wider lists what a sub-agent's tool entry has that its parent's does
// not: tools its `only:` leaves out, and grants.
func wider(parent, child *AgentFile, p, c ToolRef) []string {
	var out []string
	if len(p.Only) > 0 {
		if len(c.Only) == 0 {
			out = append(out, "every tool of the module (its parent's only: ["+strings.Join(p.Only, ", ")+"])")
		}
		for _, n := range c.Only {
			if !slices.Contains(p.Only, n) {
				out = append(out, "the tool "+n)
			}
		}
	}
	pg, cg := grantOf(toolModule{Ref: p}), grantOf(toolModule{Ref: c})
	if !pg.Workspace.Covers(cg.Workspace) {
		out = append(out, fmt.Sprintf("workspace: %s", cg.Workspace))
	}
	for _, e := range cg.Env {
		if !slices.Contains(pg.Env, e) {
			out = append(out, "env: ["+e+"]")
		}
	}
	if cg.Clock && !pg.Clock {
		out = append(out, "clock: true")
	}
	if cg.Random && !pg.Random {
		out = append(out, "random: true")
	}
	pm := resolveMounts(parent, pg.Mounts)
	for _, m := range resolveMounts(child, cg.Mounts) {
		if !slices.Contains(pm, m) {
			out = append(out, fmt.Sprintf("mounts: [{host: %s, guest: %s}]", m.Host, m.Guest))
		}
	}
	if pg.Imports != nil {
		if cg.Imports == nil {
			out = append(out, "every WASI import (its parent's imports are listed)")
		}
		for _, f := range cg.Imports {
			if !slices.Contains(pg.Imports, f) {
				out = append(out, "imports: ["+f+"]")
			}
		}
	}
	return append(out, widerNet(pg.Net, cg.Net)...)
}

// widerNet lists what a sub-agent's network grant has that its parent's
// does not: a host or port no allow entry of the parent's reaches, a
// method, a secret, or a larger limit (a zero limit is netguard's
// default, and no methods GET and HEAD).
func widerNet(p, c *NetGrant) []string {
	switch {
	case c == nil:
		return nil
	case p == nil:
		return []string{"net: (any network; its parent's grant has none)"}
	}
	var out []string
	for _, a := range c.Allow {
		if !netCovers(p.Allow, a) {
			out = append(out, "net: {allow: ["+a+"]}")
		}
	}
	pm := grantMethods(p.Methods)
	for _, m := range grantMethods(c.Methods) {
		if !slices.Contains(pm, m) {
			out = append(out, "net: {methods: ["+m+"]}")
		}
	}
	if n, pn := orDefault(c.MaxRequests, netguard.DefaultMaxRequests), orDefault(p.MaxRequests, netguard.DefaultMaxRequests); n > pn {
		out = append(out, fmt.Sprintf("net: {max_requests: %d} (its parent's %d)", n, pn))
	}
	if n, pn := orDefault(c.MaxRequestBytes, netguard.DefaultMaxRequestBytes), orDefault(p.MaxRequestBytes, netguard.DefaultMaxRequestBytes); n > pn {
		out = append(out, fmt.Sprintf("net: {max_request_bytes: %s} (its parent's %s)", n, pn))
	}
	if n, pn := orDefault(c.MaxResponseBytes, netguard.DefaultMaxResponseBytes), orDefault(p.MaxResponseBytes, netguard.DefaultMaxResponseBytes); n > pn {
		out = append(out, fmt.Sprintf("net: {max_response_bytes: %s} (its parent's %s)", n, pn))
	}
	if d, pd := orDefault(c.Timeout, Duration(netguard.DefaultTimeout)), orDefault(p.Timeout, Duration(netguard.DefaultTimeout)); d > pd {
		out = append(out, fmt.Sprintf("net: {timeout: %s} (its parent's %s)", time.Duration(d), time.Duration(pd)))
	}
	for _, s := range c.Secrets {
		if !slices.ContainsFunc(p.Secrets, func(ps NetSecret) bool { return sameSecret(ps, s) }) {
			out = append(out, fmt.Sprintf("net: {secrets: [{host: %s, header: %s}]}", s.Host, s.Header))
		}
	}
	return out
}

// netCovers reports whether the parent's allow entries reach everything
// the entry a reaches: each of its ports (80 and 443 for an entry without
// one) of its host, or of every host its wildcard names.
func netCovers(allow []string, a string) bool {
	if _, _, err := net.SplitHostPort(a); err == nil {
		return netguard.Covers(allow, a)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
	return netguard.Covers(allow, net.JoinHostPort(host, "80")) && netguard.Covers(allow, net.JoinHostPort(host, "443"))
}

// grantMethods are the methods a grant allows, in upper case as netguard
// takes them.
func grantMethods(ms []string) []string {
	if ms == nil {
		ms = netguard.DefaultMethods
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = strings.ToUpper(m)
	}
	return out
}

func sameSecret(a, b NetSecret) bool {
	return a.Host == b.Host && a.Value == b.Value && http.CanonicalHeaderKey(a.Header) == http.CanonicalHeaderKey(b.Header)
}

func orDefault[T int | Size | Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// limitDefaults are the values the sandbox gives the limits an agent file
// leaves zero (see sandbox.Policy).
var limitDefaults = Limits{Memory: 256 << 20, Timeout: Duration(sandbox.DefaultTimeout), Output: defaultOutputLimit,
	Stderr: 64 << 10, Stdin: 16 << 20, Files: 256, Staging: 256 << 20, StagedPaths: 10000}

// widerLimits lists the limits of c past those of p, each zero taking the
// sandbox's default.
func widerLimits(p, c Limits) []string {
	p, c = limitDefaults.overriddenBy(p), limitDefaults.overriddenBy(c)
	var out []string
	size := func(key string, cv, pv Size) {
		if cv > pv {
			out = append(out, fmt.Sprintf("%s: %s (its parent's %s)", key, cv, pv))
		}
	}
	count := func(key string, cv, pv int) {
		if cv > pv {
			out = append(out, fmt.Sprintf("%s: %d (its parent's %d)", key, cv, pv))
		}
	}
	size("memory", c.Memory, p.Memory)
	if c.Timeout > p.Timeout {
		out = append(out, fmt.Sprintf("timeout: %s (its parent's %s)", time.Duration(c.Timeout), time.Duration(p.Timeout)))
	}
	size("output", c.Output, p.Output)
	size("stderr", c.Stderr, p.Stderr)
	size("stdin", c.Stdin, p.Stdin)
	count("files", c.Files, p.Files)
	size("staging", c.Staging, p.Staging)
	count("staged_paths", c.StagedPaths, p.StagedPaths)
	return out
}

// sameServer reports whether two entries name one MCP server: the same
// name, and the same command or URL.
func sameServer(a, b MCPServer) bool {
	return a.Name == b.Name && a.URL == b.URL && slices.Equal(a.Command, b.Command)
}

// widerServer lists what a sub-agent's entry for an MCP server has that
// its parent's entry for it does not: another prefix (the approval rules
// see a server's tools by their prefixed names), tools the parent's only:
// leaves out, variables and headers.
func widerServer(p, c MCPServer) []string {
	var out []string
	if c.Prefix != p.Prefix {
		out = append(out, fmt.Sprintf("prefix: %q (its parent's is %q)", c.Prefix, p.Prefix))
	}
	if len(p.Only) > 0 {
		if len(c.Only) == 0 {
			out = append(out, "every tool of the server (its parent's only: ["+strings.Join(p.Only, ", ")+"])")
		}
		for _, n := range c.Only {
			if !slices.Contains(p.Only, n) {
				out = append(out, "the tool "+n)
			}
		}
	}
	for _, e := range c.Env {
		if !slices.Contains(p.Env, e) {
			out = append(out, "env: ["+envName(e)+"]")
		}
	}
	var headers []string
	for k, v := range c.Headers {
		if !hasHeader(p.Headers, k, v) {
			headers = append(headers, "headers: {"+k+"}")
		}
	}
	slices.Sort(headers)
	return append(out, headers...)
}

// envName is the variable an env: entry names, without its value.
func envName(e string) string {
	name, _, _ := strings.Cut(e, "=")
	return name
}

func hasHeader(h map[string]string, k, v string) bool {
	for pk, pv := range h {
		if http.CanonicalHeaderKey(pk) == http.CanonicalHeaderKey(k) && pv == v {
			return true
		}
	}
	return false
}
