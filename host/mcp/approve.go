package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// approvalKey names the one input request of a call that needs approval.
const approvalKey = "cairn-approval"

// maxOpenQuestions bounds the questions a Server keeps awaiting their
// answers; past it the oldest is forgotten, and an answer to it asks
// again.
const maxOpenQuestions = 256

// questions are the approval questions a Server has asked and not yet had
// answered. A question is asked as a multi round-trip request (MCP
// elicitation: the SDK asks a client of an older protocol itself and
// calls the handler again with the answer) whose request state, random,
// names it. An answer counts only with that request state, for the same
// tool and arguments the question was about, and once: a client cannot
// approve a call no one was asked about, nor move an answer to another
// call or use it twice. The zero value is ready to use.
type questions struct {
	mu   sync.Mutex
	open map[string]question // by request state
	seq  uint64
}

type question struct {
	call [sha256.Size]byte // callDigest of what it asks about
	seq  uint64            // the order it was asked in
}

// askReason is why a call is put to a person: an approval rule of the
// agent file says to ask, or its tool runs outside the sandbox, on an MCP
// server, and no rule allows it.
type askReason struct {
	unsandboxed bool
	server      string
	agent, tool string
}

// question says it to the client's user.
func (w askReason) question() string {
	if w.unsandboxed {
		return fmt.Sprintf("It runs outside cairn's sandbox, on MCP server %s: cairn cannot stage or undo what it changes, "+
			"so each call of it is put to you unless an approval rule of agent %s allows it.", w.server, w.agent)
	}
	return fmt.Sprintf("An approval rule of agent %s says to ask.", w.agent)
}

// noOne says it, for a call denied since the client has no one to ask.
func (w askReason) noOne() string {
	if w.unsandboxed {
		return fmt.Sprintf("it runs outside cairn's sandbox, on MCP server %s, so a person must decide on each call of it "+
			"unless an approval rule of the agent file allows it ({tool: %s, action: allow})", w.server, w.tool)
	}
	return "the agent file's approval rules say a person must decide on it"
}

// ask is the input-required result that asks the client's user about a
// call, saying why.
func (q *questions) ask(name string, args json.RawMessage, why askReason) *sdk.CallToolResult {
	state := rand.Text()
	q.mu.Lock()
	if q.open == nil {
		q.open = map[string]question{}
	}
	if len(q.open) >= maxOpenQuestions {
		q.forgetOldest()
	}
	q.seq++
	q.open[state] = question{call: callDigest(name, args), seq: q.seq}
	q.mu.Unlock()
	return &sdk.CallToolResult{RequestState: state, InputRequests: sdk.InputRequestMap{approvalKey: &sdk.ElicitParams{Mode: "form",
		Message:         fmt.Sprintf("cairn: allow %s with %s? %s", name, args, why.question()),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}}}}
}

func (q *questions) forgetOldest() {
	var oldest string
	for state, asked := range q.open {
		if oldest == "" || asked.seq < q.open[oldest].seq {
			oldest = state
		}
	}
	delete(q.open, oldest)
}

// answer is the client's answer, in p, to the question this Server asked
// about a call of name with args, which is then closed. It is false when
// p carries no answer, or one not bound to such a question; the caller
// then asks.
func (q *questions) answer(p *sdk.CallToolParamsRaw, name string, args json.RawMessage) (*sdk.ElicitResult, bool) {
	res, ok := p.InputResponses[approvalKey].(*sdk.ElicitResult)
	if !ok || res == nil {
		return nil, false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	asked, ok := q.open[p.RequestState]
	if !ok || asked.call != callDigest(name, args) {
		return nil, false
	}
	delete(q.open, p.RequestState)
	return res, true
}

// callDigest identifies a call of name with args, whatever the whitespace
// in args.
func callDigest(name string, args json.RawMessage) [sha256.Size]byte {
	var compact bytes.Buffer
	if json.Compact(&compact, args) != nil {
		compact.Reset()
		compact.Write(args)
	}
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(compact.Bytes())
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// approver decides a call put to a person, for why, from answer, the
// client's answer to the question asked about it (nil when none was). A
// client that cannot be asked has the call denied, and the denial says
// why.
func approver(ss *sdk.ServerSession, answer *sdk.ElicitResult, why askReason) host.Approver {
	return func(context.Context, host.ApprovalRequest) (host.Decision, error) {
		switch {
		case !canElicit(ss):
			return host.Decision{Reason: why.noOne() + ", and this MCP client cannot ask one (it does not support elicitation)"}, nil
		case answer == nil:
			return host.Decision{Reason: "the MCP client did not answer the question whether to allow it"}, nil
		case answer.Action == "accept":
			return host.Decision{Approved: true}, nil
		case answer.Action == "decline":
			return host.Decision{Reason: "the MCP client's user declined it"}, nil
		}
		return host.Decision{Reason: "the MCP client's user dismissed the question (" + answer.Action + ")"}, nil
	}
}

func canElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}
