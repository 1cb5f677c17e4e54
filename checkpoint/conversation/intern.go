package conversation

import "unique"

// Intern makes the strings of m that are the same from message to message
// share one copy each: its role and tool names, and those of its
// recording (see Recording.Intern). A long-running agent holds its whole
// conversation, and a message decoded from the journal or a snapshot has
// its own copy of every string: for a round of one short call, this is
// about a fifth of what its two messages take. Texts, inputs and call ids,
// which seldom repeat, are left as they are. Intern changes m in place:
// call it only on a message no other goroutine reads.
func (m *Message) Intern() {
	m.Role = Role(intern(string(m.Role)))
	m.ToolName = intern(m.ToolName)
	for i := range m.ToolCalls {
		m.ToolCalls[i].Name = intern(m.ToolCalls[i].Name)
	}
	m.Recording.Intern()
}

// Intern makes the strings of r that repeat from call to call share one
// copy each: the module's digest and name, the policy's digest, and the
// paths and digests of the files the call saw. A path or digest that
// never repeats (a file changed every round) costs its entry in the
// process's table of them, a few tens of bytes, for as long as it is
// used. A nil r is left as it is.
func (r *Recording) Intern() {
	if r == nil {
		return
	}
	r.Module, r.Ref, r.Policy = intern(r.Module), intern(r.Ref), intern(r.Policy)
	for i := range r.Files {
		r.Files[i].Path, r.Files[i].Digest = intern(r.Files[i].Path), intern(r.Files[i].Digest)
	}
	for i := range r.Outside {
		r.Outside[i] = intern(r.Outside[i])
	}
}

// intern is the one copy of s the process keeps while it is used.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}
