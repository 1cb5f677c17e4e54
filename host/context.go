package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

// ContextSpec is the agent file's `context:` section: a bound on what each
// request sends the model, and what to do when the conversation outgrows
// it. The zero value sends the whole conversation every round.
//
//	context:
//	  budget: 8000          # estimated tokens a request may send (model.EstimateRequest)
//	  policy: summarize     # or drop
//	  keep_turns: 20        # turns a cut keeps at most (default: what fits in half the budget)
//	  max_tool_result: 1000 # tokens of one tool result in a request (default: a quarter of the budget)
//
// Every message stays in the agent's journal whatever is sent; a cut is
// itself journaled (checkpoint.Compaction), so a resumed run sends exactly
// the request the interrupted one would have sent. See docs/context.md.
type ContextSpec struct {
	// Budget bounds the estimated tokens of each request: system prompt,
	// tool descriptions and messages. 0: no bound, in an agent file
	// made in code; one read from YAML that writes the section must give
	// a budget.
	Budget int `yaml:"budget" json:"budget,omitempty"`
	// Policy is how the oldest turns are cut when a request would exceed
	// the budget: summarize (default) or drop.
	Policy ContextPolicy `yaml:"policy" json:"policy,omitempty"`
	// KeepTurns bounds the turns a cut keeps; 0: as many as fit in half
	// the budget, which a cut always respects.
	KeepTurns int `yaml:"keep_turns" json:"keep_turns,omitempty"`
	// MaxToolResult bounds, in estimated tokens, one tool result as a
	// request shows it; a longer one is cut, with a note saying so. The
	// results of a round also share what is left of the budget, which may
	// cut them further (see window.shares). 0: a quarter of the budget.
	MaxToolResult int `yaml:"max_tool_result" json:"max_tool_result,omitempty"`
}

// ContextPolicy is how a conversation over its budget is cut.
type ContextPolicy string

// The context policies.
const (
	// PolicySummarize has the model summarise the oldest turns; the
	// summary stands in for them at the head of every later request.
	PolicySummarize ContextPolicy = "summarize"
	// PolicyDrop leaves the oldest turns out, with a note that says so.
	PolicyDrop ContextPolicy = "drop"
)

// minContextBudget is the smallest budget an agent file may set.
const minContextBudget = 256

// ErrContextBudget is returned, wrapped, when a request cannot be brought
// within the agent's context budget: what every request must send (the
// system prompt, the tools, the task and the last round) is larger than
// the budget. Nothing is sent and nothing is cut. A budget whose system
// prompt and tools leave no room for a conversation is refused sooner,
// with this error too: by ParseAgentFile, or by a run before it stores
// anything of a new agent (see context_room.go).
var ErrContextBudget = errors.New("context budget too small")

// validate checks the section's values. section and budget say whether
// the agent file writes the section and its budget: a section written
// with no budget, or a budget of 0, is refused rather than taken for no
// bound. It returns the key of the value that is wrong with the error,
// for the caller to name its line.
func (c ContextSpec) validate(section, budget bool) (key string, err error) {
	switch {
	case c.Budget == 0 && budget:
		return "budget", fmt.Errorf("context: budget 0: at least %d, or leave out the section", minContextBudget)
	case c.Budget == 0 && (section || c != ContextSpec{}):
		return "budget", errors.New("context: budget is missing (estimated tokens a request may send, e.g. 8000), or leave out the section")
	case c.Budget == 0:
		return "", nil
	case c.Budget < minContextBudget:
		return "budget", fmt.Errorf("context: budget %d is below the least useful one, %d tokens", c.Budget, minContextBudget)
	case c.Policy != "" && c.Policy != PolicySummarize && c.Policy != PolicyDrop:
		return "policy", fmt.Errorf("context: policy %q: want summarize or drop", c.Policy)
	case c.KeepTurns < 0:
		return "keep_turns", errors.New("context: keep_turns cannot be negative")
	case c.MaxToolResult < 0 || c.MaxToolResult > c.Budget/2 || c.MaxToolResult > 0 && c.MaxToolResult < minToolResult:
		return "max_tool_result", fmt.Errorf("context: max_tool_result %d: want between %d (a cut result's note and some of the result) and half the budget (%d)",
			c.MaxToolResult, minToolResult, c.Budget/2)
	}
	return "", nil
}

func (c ContextSpec) policy() ContextPolicy {
	if c.Policy == "" {
		return PolicySummarize
	}
	return c.Policy
}

// maxToolResult is the effective bound on one tool result.
func (c ContextSpec) maxToolResult() int {
	if c.MaxToolResult == 0 {
		return c.Budget / 4
	}
	return c.MaxToolResult
}

// summaryCap bounds, in estimated tokens, the summary a cut keeps.
func (c ContextSpec) summaryCap() int { return c.Budget / 10 }

// conversation is what the round's request sends and how many of the
// model's turns it leaves out: the whole conversation, or, under a context
// budget, the run's window brought within it (see fit).
func (r *run) conversation(ctx context.Context, round int) ([]conversation.Message, int, error) {
	if r.af.Context.Budget == 0 {
		return r.requestMessages(), 0, nil
	}
	if r.window == nil {
		w, err := newWindow(r.af.Context, r.af.System, r.tools.specs, r.state())
		if err != nil {
			return nil, 0, err
		}
		r.window = w
	}
	return r.fit(ctx, r.window, round)
}

// askConversation is what a side question sends: the whole conversation
// and the question, or, under a context budget, the window as the last cut
// left it and the question. Nothing is cut for a question, since Ask
// writes nothing to the agent: the request may go over the budget by what
// the conversation gained since the last cut.
func askConversation(af *AgentFile, tools []model.Tool, st *checkpoint.State, question string) ([]conversation.Message, int, error) {
	q := conversation.Message{Role: conversation.RoleUser, Text: question}
	if af.Context.Budget == 0 {
		return append(append([]conversation.Message(nil), st.Messages...), q), 0, nil
	}
	w, err := newWindow(af.Context, af.System, tools, st)
	if err != nil {
		return nil, 0, err
	}
	msgs, _ := w.request([]conversation.Message{q})
	return msgs, w.earlier, nil
}
