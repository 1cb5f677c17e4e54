package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/bmatcuk/doublestar/v4"
)

// Action is what an approval rule does with a call it matches.
type Action string

// The actions of an approval rule.
const (
	ActionAllow Action = "allow" // run the call
	ActionDeny  Action = "deny"  // answer it with a denial the model reads
	ActionAsk   Action = "ask"   // a person decides
)

// Rule is one entry of an agent file's `approvals:` list. The first rule
// that matches a call decides it; a call no rule matches is allowed.
//
//	approvals:
//	  - {tool: write_file, args: {path: "notes/**"}, action: allow}
//	  - {tool: write_file, action: ask}
//	  - {tool: "edit_*", action: deny}
type Rule struct {
	// Tool is a tool's name or a pattern of names ("*", "edit_*").
	Tool string `yaml:"tool" json:"tool"`
	// Args match the call's arguments by name: each pattern (doublestar
	// syntax, "**" spans directories) must match the argument's value as
	// text. A call whose arguments are not a JSON object, or lack one of
	// these arguments, does not match. A string is also matched as the
	// path it names, its "." and ".." steps and repeated slashes resolved
	// (after a URL's scheme and host, its path): an allow rule matches
	// only that resolved path, so "drafts/../notes.txt" is not allowed by
	// "drafts/**"; a deny or ask rule matches either form.
	Args   map[string]string `yaml:"args" json:"args,omitempty"`
	Action Action            `yaml:"action" json:"action"`
}

// validate checks a rule's patterns and action.
func (r Rule) validate() error {
	switch r.Action {
	case ActionAllow, ActionDeny, ActionAsk:
	default:
		return fmt.Errorf("action %q: want allow, deny or ask", r.Action)
	}
	if _, err := path.Match(r.Tool, ""); r.Tool == "" || err != nil {
		return fmt.Errorf("tool %q: want a tool's name or a pattern such as \"*\"", r.Tool)
	}
	for name, p := range r.Args {
		if !doublestar.ValidatePattern(p) {
			return fmt.Errorf("args.%s: %q is not a valid pattern", name, p)
		}
	}
	return nil
}

// matches reports whether the rule applies to a call.
func (r Rule) matches(c conversation.ToolCall) bool {
	if ok, _ := path.Match(r.Tool, c.Name); !ok {
		return false
	}
	if len(r.Args) == 0 {
		return true
	}
	var args map[string]any
	if json.Unmarshal([]byte(c.Input), &args) != nil {
		return false
	}
	for name, pattern := range r.Args {
		v, ok := args[name]
		if !ok {
			return false
		}
		text, isString := v.(string)
		if !isString {
			b, _ := json.Marshal(v)
			text = string(b)
		}
		resolved, _ := doublestar.Match(pattern, text)
		if isString && resolvedPath(text) != text {
			// The path the tool reaches decides an allow; a deny or ask
			// also holds for the text as written.
			written := resolved
			resolved, _ = doublestar.Match(pattern, resolvedPath(text))
			if r.Action != ActionAllow {
				resolved = resolved || written
			}
		}
		if !resolved {
			return false
		}
	}
	return true
}

// resolvedPath is text as the path it names: "." and ".." steps and
// repeated slashes resolved, lexically, as the sandbox resolves a guest's
// path in its workspace; a URL keeps its scheme, host, query and fragment
// and has its path resolved. A trailing slash stays. A relative path that climbs above its
// start keeps its leading "..": no rule's pattern for the workspace
// matches it.
func resolvedPath(text string) string {
	prefix, p, suffix := "", text, ""
	if i := strings.Index(text, "://"); i > 0 && isScheme(text[:i]) {
		rest := text[i+3:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			return text
		}
		prefix, p = text[:i+3+j], rest[j:]
		if k := strings.IndexAny(p, "?#"); k >= 0 {
			p, suffix = p[:k], p[k:]
		}
	}
	if p == "" {
		return text
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return prefix + clean + suffix
}

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, '+', '-' or '.'.
func isScheme(s string) bool {
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// decide is the action the first matching rule names, and which rule.
func decide(rules []Rule, c conversation.ToolCall) (Action, int) {
	for i, r := range rules {
		if r.matches(c) {
			return r.Action, i
		}
	}
	return ActionAllow, -1
}

// ApprovalRequest is a call that waits for a person's decision.
type ApprovalRequest struct {
	Agent string `json:"agent"`
	Round int    `json:"round"`
	Call  Call   `json:"call"`
}

// Decision is a person's answer to an ApprovalRequest.
type Decision struct {
	Approved bool
	// Reason is why a call was denied; the model reads it.
	Reason string
}

// Approver asks a person about a call, for example on a terminal. It
// returns ErrNoDecision when it cannot ask: the run then pauses awaiting
// approval, the request persisted, and `cairn approve` or `cairn deny`
// answers it later.
type Approver func(ctx context.Context, req ApprovalRequest) (Decision, error)

// Errors of approvals.
var (
	// ErrNoDecision: the approver could not ask anyone.
	ErrNoDecision = errors.New("no one to ask")
	// ErrNotAwaiting: approve or deny named a call that does not wait for
	// a decision.
	ErrNotAwaiting = errors.New("call does not await approval")
)

// denial is the result the model reads for a denied call.
func denial(c conversation.ToolCall, why string) callResult {
	return callResult{call: c, isError: true,
		output: fmt.Sprintf("The call %s of %s was denied: %s. Do not retry it as it is; choose another way or ask the user.", c.ID, c.Name, why)}
}

// denial says which rule denied a call, and whose: the agent file's own,
// or that of an agent above it.
func (v verdict) denial() string {
	if v.up == 0 {
		return fmt.Sprintf("the agent file's approval rules forbid it (approvals[%d])", v.rule)
	}
	whose := "its parent"
	if v.up > 1 {
		whose = fmt.Sprintf("an agent %d levels above it", v.up)
	}
	return fmt.Sprintf("the approval rules of %s, %s, forbid it (approvals[%d] of %s); a sub-agent's calls meet its parent's rules too",
		whose, v.by.Name, v.rule, v.by.describe())
}

// awaitingCalls lists calls that wait for approval, for a reason line.
func awaitingCalls(calls []conversation.ToolCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.ID + " (" + c.Name + ")"
	}
	sort.Strings(parts)
	return "awaiting approval of " + strings.Join(parts, ", ")
}
