package host

import (
	"fmt"
	"slices"
	"strings"
)

// narrows checks that the sub-agent's tools and grants narrow its
// parent's, naming the line to change when they do not.
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
	}
	if m := s.af.Memory; m != "" && m != parent.Memory {
		return fmt.Errorf("%s: sub-agent %s: memory %q is not its parent's memory namespace; "+
			"a sub-agent's tools can only narrow its parent's: name the parent's namespace, or give the parent memory %q too",
			s.where, s.Name, m, m)
	}
	for _, m := range s.af.MCP {
		if !slices.ContainsFunc(parent.MCP, func(p MCPServer) bool { return sameServer(p, m) }) {
			return fmt.Errorf("%s: sub-agent %s: MCP server %s is not one of its parent's; "+
				"a sub-agent's tools can only narrow its parent's", s.where, s.Name, m.Name)
		}
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

// moduleKey is the module a tool entry names, resolved: the built-in
// tools or a file's absolute path.
func moduleKey(af *AgentFile, ref ToolRef) string {
	if ref.Module == BuiltinModule {
		return BuiltinModule
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
	return out
}

func sameServer(a, b MCPServer) bool {
	return a.Name == b.Name && a.URL == b.URL && slices.Equal(a.Command, b.Command)
}
