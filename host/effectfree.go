package host

import (
	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// effectFree reports whether a call of the named tool cannot change
// anything outside its own result: a sandboxed tool whose policy mounts
// nothing writable and grants no network. A native tool (which the host
// carries out, and some of which change state) and a tool of an MCP
// server (which runs outside the sandbox) are never taken for one. A
// call of a tool that does not exist only answers with an error, so it
// is effect-free too.
func (ts *toolset) effectFree(name string) bool {
	t, ok := ts.tools[name]
	if !ok {
		return true
	}
	return t.remote == nil && t.native == nil && t.guard == nil && !ts.stages(name)
}

// effectFreeTurn reports whether every call of a turn is effect-free: then
// the calls' executing records need no fdatasync of their own before they
// run, unless a call of the turn needs a person (see startCalls;
// RATIONALE.md, "Durability: what is synced, and when").
func (ts *toolset) effectFreeTurn(calls []conversation.ToolCall) bool {
	for _, c := range calls {
		if !ts.effectFree(c.Name) {
			return false
		}
	}
	return true
}
