package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	return &sdk.CallToolResult{RequestState: state, InputRequests: sdk.InputRequestMap{approvalKey: elicitation(name, args, why)}}
}

// elicitation is the question about a call of name with args.
func elicitation(name string, args json.RawMessage, why askReason) *sdk.ElicitParams {
	return &sdk.ElicitParams{Mode: "form", Message: fmt.Sprintf("cairn: allow %s with %s? %s", name, questionArgs(args), why.question()),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}}
}

// Bounds on the arguments a question quotes: quoted whole, a call's
// arguments (up to the 16 MiB a client sends on stdio) would make a
// question larger than a client reads, and one no person reads through.
const (
	maxQuestionArgs = 4 << 10 // the arguments, when quoted whole
	maxQuestionArg  = 512     // one argument, when they are not
	maxQuestionKeys = 64      // arguments quoted one by one
)

// questionArgs is args as a question quotes them: whole when they are
// short; else each argument of the object, by name, those that are long
// cut short, saying so and how long they are (the call is made, if
// allowed, with args whole: the answer is bound to them, see questions).
func questionArgs(args json.RawMessage) string {
	if len(args) <= maxQuestionArgs {
		return string(args)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil || len(obj) > maxQuestionKeys {
		return fmt.Sprintf("%s… [cut: %d bytes of JSON in all]", cutText(string(args), maxQuestionArgs), len(args))
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(obj)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(questionValue(json.RawMessage(jsonText(k))))
		b.WriteByte(':')
		b.WriteString(questionValue(obj[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// questionValue is one JSON value as a question quotes it: whole when it
// is short, else its start and how long it is.
func questionValue(v json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, v) == nil {
		v = compact.Bytes()
	}
	if len(v) <= maxQuestionArg {
		return string(v)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return fmt.Sprintf("%s… [cut: a string of %d bytes]", jsonText(cutText(s, maxQuestionArg/2)), len(s))
	}
	return fmt.Sprintf("%s… [cut: %d bytes of JSON]", cutText(string(v), maxQuestionArg), len(v))
}

// jsonText is s as a JSON string, <, > and & as they are.
func jsonText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// cutText is the start of s, at most n bytes, not cut inside a
// character.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// takesRoundTrips reports whether the client of ss answers an approval
// question as a multi round-trip request (MCP 2026-07-28, as the SDK
// decides it): it retries the call with the answer. A client of an older
// version is asked directly, with elicitation/create, while the call
// waits (see askNow).
func takesRoundTrips(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= "2026-07-28"
}

// askNow puts a call to the user of a client that does not take round
// trips, waiting for the answer with the call's context, and then makes
// the call as the answer decides. The question is not left to the SDK,
// which would ask it with a context that no stop of the server ends and
// answer its failure itself, with no round journaled: here a call whose
// context ends while it waits (a stop, Close, the client's cancellation
// or end of its session) is denied, saying so, and a question the client
// answers with an error is taken as dismissed; either way the call's
// round is committed, its result saying why, as for any denial. changes:
// the call may change the workspace (see handler).
func (s *Server) askNow(ctx context.Context, req *sdk.CallToolRequest, name, server string, args json.RawMessage, why askReason, changes bool) (*sdk.CallToolResult, error) {
	answer, err := req.Session.Elicit(ctx, elicitation(name, args, why))
	switch {
	case err == nil:
		out, err := s.call(ctx, req, name, server, args, approver(req.Session, answer, why))
		return s.answer(ctx, out, err, false, changes)
	case ctx.Err() != nil:
		// The round is taken all the same: a context that is not ended,
		// bounded as the answers to stopped calls are.
		commit, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace)
		defer cancel()
		out, err := s.call(commit, req, name, server, args, decided(host.Decision{Reason: stopReason(ctx)}))
		return s.answer(ctx, out, err, true, false)
	}
	var wire *jsonrpc.Error
	msg := err.Error()
	if errors.As(err, &wire) {
		msg = fmt.Sprintf("%s (code %d)", wire.Message, wire.Code)
	}
	reason := "the question whether to allow it was answered with an error, not a decision, which dismissed it: " + cut(msg, 500)
	out, err := s.call(ctx, req, name, server, args, decided(host.Decision{Reason: reason}))
	return s.answer(ctx, out, err, false, false)
}

// stopReason is why a call whose context ended while it waited for its
// approval question's answer is denied: the client cancelled it, or the
// server stopped it, for the cause it gave.
func stopReason(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != context.Canceled && !errors.Is(cause, errClientCancelled) {
		return fmt.Sprintf("it was stopped (%v) while its approval question awaited the MCP client's answer, so it did not run", cause)
	}
	return "the MCP client cancelled it while its approval question awaited the answer, so it did not run"
}

// decided is the approver of a call whose decision is d already.
func decided(d host.Decision) host.Approver {
	return func(context.Context, host.ApprovalRequest) (host.Decision, error) { return d, nil }
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
		case answer.Action == "cancel":
			return host.Decision{Reason: "the MCP client's user dismissed the question"}, nil
		case answer.Action == "":
			return host.Decision{Reason: "the MCP client answered the question with no action, so not with accept"}, nil
		}
		return host.Decision{Reason: fmt.Sprintf("the MCP client answered the question with an action MCP does not know (%q), so not with accept",
			cut(answer.Action, 40))}, nil
	}
}

func canElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}
