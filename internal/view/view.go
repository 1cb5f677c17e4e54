// Package view is how cairn shows what a store holds, on a terminal and
// over HTTP alike: an agent's line in a listing, a tree of agents, a
// line diff of a file, one network exchange, a task list. The CLI and
// the web view share it so that the two say the same; it is not part of
// cairn's API.
package view

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/plural"
)

// AgentStatus is what an agent is called in a listing: running while a
// process holds it, interrupted when it stopped mid-run and needs resume,
// else how its last run ended.
func AgentStatus(s checkpoint.Summary) string {
	switch {
	case s.Err != nil:
		return "unreadable"
	case s.Locked:
		return "running"
	case s.Status == checkpoint.StatusApproval && s.Decided:
		return string(checkpoint.StatusPaused) // nothing waits for a person
	case s.Status == checkpoint.StatusApproval:
		return string(s.Status)
	case s.Interrupted:
		return "interrupted"
	}
	return string(s.Status)
}

// ReasonOf is the reason to show beside an agent's status: its state's
// reason, but of an agent whose calls awaiting approval are all decided,
// that resume, the command that continues the agent (`cairn resume
// AGENT`, or for a workflow's step `cairn workflow resume ID`), carries
// the decisions out.
func ReasonOf(s checkpoint.Summary, reason, resume string) string {
	if s.Status == checkpoint.StatusApproval && s.Decided {
		return fmt.Sprintf("its calls that awaited approval are decided; `%s` carries the decisions out", resume)
	}
	return reason
}

// AgentLine is one agent as a listing shows it: `cairn ls --json`, and
// the fields of the HTTP API's agent list that both share.
type AgentLine struct {
	Agent     string             `json:"agent"`
	Status    string             `json:"status"`
	Rounds    int                `json:"rounds"`
	ToolCalls int                `json:"tool_calls"`
	Usage     conversation.Usage `json:"usage"`
	Updated   time.Time          `json:"updated"`
	// Error says why the agent could not be read (Status "unreadable").
	Error string `json:"error,omitempty"`
	// Parent is, for a sub-agent, the agent whose delegation made it.
	Parent string `json:"parent,omitempty"`
}

// LineOf is the listing of the agent s summarises.
func LineOf(s checkpoint.Summary) AgentLine {
	l := AgentLine{Agent: s.ID, Status: AgentStatus(s), Rounds: s.Round, ToolCalls: s.ToolCalls,
		Usage: s.Usage, Updated: s.Updated, Parent: s.Parent}
	if s.Err != nil {
		l.Error = s.Err.Error()
	}
	return l
}

// IsText reports whether b reads as text: valid UTF-8 with no NUL byte.
func IsText(b []byte) bool { return utf8.Valid(b) && !bytes.Contains(b, []byte{0}) }

// ExchangeLine is one exchange of a call on one line, as `cairn log`
// prints it: "GET https://api.example.com/x → 200, 1234 bytes".
func ExchangeLine(e conversation.Exchange) string {
	switch e.Step {
	case conversation.ExchangeReceived:
		return fmt.Sprintf("%s %s → %d, %s", e.Method, e.URL, e.Status, plural.Count(e.ResponseSize, "byte"))
	case conversation.ExchangeRefused:
		return fmt.Sprintf("%s %s → refused: %s", e.Method, e.URL, e.Error)
	case conversation.ExchangeUnprocessed:
		return fmt.Sprintf("%s %s → sent, not processed by the server (safe to send again): %s", e.Method, e.URL, e.Error)
	case conversation.ExchangeFailed:
		return fmt.Sprintf("%s %s → sent, no response: %s", e.Method, e.URL, e.Error)
	}
	return fmt.Sprintf("%s %s → sent, response not received", e.Method, e.URL)
}

// TreeOrder orders a store's list as trees: each agent followed by its
// sub-agents, depth first, each with its depth below the top of the list.
// A sub-agent whose parent is not in the list is listed at the top.
func TreeOrder(list []checkpoint.Summary) ([]checkpoint.Summary, []int) {
	ids := map[string]bool{}
	kids := map[string][]checkpoint.Summary{}
	for _, s := range list {
		ids[s.ID] = true
	}
	var tops []checkpoint.Summary
	for _, s := range list {
		if s.Parent == "" && s.Err != nil {
			s.Parent = parentByID(s.ID, ids)
		}
		if s.Parent != "" && ids[s.Parent] {
			kids[s.Parent] = append(kids[s.Parent], s)
		} else {
			tops = append(tops, s)
		}
	}
	var out []checkpoint.Summary
	var depth []int
	var walk func(s checkpoint.Summary, d int)
	walk = func(s checkpoint.Summary, d int) {
		out, depth = append(out, s), append(depth, d)
		ks := kids[s.ID]
		sort.Slice(ks, func(i, j int) bool { return ks[i].ID < ks[j].ID })
		for _, k := range ks {
			walk(k, d+1)
		}
	}
	for _, s := range tops {
		walk(s, 0)
	}
	return out, depth
}

// parentByID is the parent an unreadable agent's id names, its lineage
// unread: a sub-agent's or a step agent's id is its parent's, a dot, and
// its own name. It is the longest such prefix among ids, or "".
func parentByID(id string, ids map[string]bool) string {
	for i := strings.LastIndexByte(id, '.'); i > 0; i = strings.LastIndexByte(id[:i], '.') {
		if ids[id[:i]] {
			return id[:i]
		}
	}
	return ""
}

// FormatTodos writes a task list one item a line, its status first.
func FormatTodos(items []checkpoint.Todo) string {
	if len(items) == 0 {
		return "(empty)"
	}
	var b strings.Builder
	for i, t := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s] %s", todoMark(t.Status), t.Text)
	}
	return b.String()
}

func todoMark(s checkpoint.TodoStatus) string {
	switch s {
	case checkpoint.TodoDone:
		return "x"
	case checkpoint.TodoInProgress:
		return "~"
	}
	return " "
}
