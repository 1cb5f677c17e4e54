package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/yamlkeys"

	"go.yaml.in/yaml/v3"
)

// Script is the script provider: it plays turns from a YAML file.
//
//	turns:
//	  - text: Let me look.
//	    tool_calls:
//	      - name: read_file
//	        input: {path: notes.md}
//	  - alternatives:               # the first whose `when` matches is played
//	      - when: {tool: read_file, contains: TODO}
//	        text: There are open items.
//	      - text: Nothing is open.  # no `when`: matches always
//	  - tool_calls:
//	      - name: write_file
//	        input_json: '{"path": '  # raw arguments, e.g. to play a model that writes bad JSON
//	summary: The files were read.   # the answer to every summary request (optional)
//
// A script of more than 100 turns is parsed a turn at a time, as each is
// first played, when its layout is the usual one (see splitTurns): an
// error in a later turn is then reported when the run reaches it.
//
// Which turn comes next is derived from the conversation it is sent — the
// number of assistant messages in it, and the turns it says were left out
// before them (Request.Earlier) — never from state of its own, so a run
// that is resumed or replayed from a boundary gets the turn it would have
// got. A summary request (PurposeSummary) is answered with the script's
// summary, or by default with a line that counts the words it was sent;
// it plays no turn. Call ids are call_<turn>_<index>, turn counted from 1. When the
// script has no more turns, the model answers with a text saying so and no
// tool calls, which ends the run.
//
// Token usage is deterministic: a token is a whitespace-separated word, in
// of everything sent (the system prompt, each tool's name, description and
// input schema, and the messages), out of everything answered. Counting
// what is sent costs what the request adds to the last one, not the whole
// history, and the tools are counted again only when a request offers
// other ones (see tally); the count is the same either way. So does
// finding which turn is next.
type Script struct {
	turns   []scriptTurn
	lazy    *lazyScript // a long script's turns, parsed as they are played
	summary string
	sent    tally
	price   *Price // the spec's price, which costs the turns' counted tokens
}

type scriptTurn struct {
	When         *when        `yaml:"when"`
	Text         string       `yaml:"text"`
	ToolCalls    []scriptCall `yaml:"tool_calls"`
	Alternatives []scriptTurn `yaml:"alternatives"`
}

// when matches the tool results of the previous round: Tool, when set,
// names the tool; Contains must appear in its output; Error, when set,
// must equal whether it failed. Any one matching result is enough.
type when struct {
	Tool     string `yaml:"tool"`
	Contains string `yaml:"contains"`
	Error    *bool  `yaml:"error"`
}

type scriptCall struct {
	Name      string `yaml:"name"`
	Input     any    `yaml:"input"`
	InputJSON string `yaml:"input_json"`
	line      int
}

// UnmarshalYAML keeps the line of a call, for errors.
func (c *scriptCall) UnmarshalYAML(n *yaml.Node) error {
	type plain scriptCall
	if err := n.Decode((*plain)(c)); err != nil {
		return err
	}
	c.line = n.Line
	return nil
}

// ParseScript reads a script.
//
// # Errors
//
// YAML errors and calls without a name or with input that is not a
// mapping, each with its line.
func ParseScript(data []byte) (*Script, error) {
	if layout, ok := splitTurns(data); ok && len(layout.turns) > lazyTurns {
		return parseLazy(data, layout)
	}
	return parseWhole(data)
}

// parseWhole parses the script and checks every turn.
func parseWhole(data []byte) (*Script, error) {
	var doc struct {
		Turns   []scriptTurn `yaml:"turns"`
		Summary string       `yaml:"summary"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("script: %w", yamlkeys.Friendly(err, reflect.TypeOf(doc)))
	}
	if err := yamlkeys.WholeNumbers(data, reflect.TypeOf(doc)); err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	for _, t := range doc.Turns {
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("script: %w", err)
		}
	}
	return &Script{turns: doc.Turns, summary: doc.Summary}, nil
}

func (t scriptTurn) check() error {
	for _, c := range t.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("line %d: a tool call has no name", c.line)
		}
		if _, err := c.arguments(); err != nil {
			return fmt.Errorf("line %d: %w", c.line, err)
		}
	}
	for _, a := range t.Alternatives {
		if err := a.check(); err != nil {
			return err
		}
	}
	return nil
}

// arguments are the call's input as the model "writes" it.
func (c scriptCall) arguments() (string, error) {
	if c.InputJSON != "" {
		return c.InputJSON, nil
	}
	if c.Input == nil {
		return "{}", nil
	}
	if _, ok := c.Input.(map[string]any); !ok {
		return "", fmt.Errorf("input of %s is not a mapping", c.Name)
	}
	b, err := json.Marshal(c.Input)
	if err != nil {
		return "", fmt.Errorf("input of %s: %w", c.Name, err)
	}
	return string(b), nil
}

// Complete plays the turn the conversation has reached.
func (s *Script) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	if req.Purpose == PurposeSummary {
		return s.costed(s.summarize(req)), nil
	}
	in, n := s.sent.count(req.System, req.Messages)
	in += s.sent.tools(req.Tools)
	n += req.Earlier
	msg := conversation.Message{Role: conversation.RoleAssistant}
	if n >= s.count() {
		msg.Text = "(the script has no more turns)"
	} else {
		t, err := s.turn(n)
		if err != nil {
			return Response{}, err
		}
		turn := t.pick(lastResults(req.Messages))
		msg.Text = turn.Text
		for i, c := range turn.ToolCalls {
			args, _ := c.arguments()
			msg.ToolCalls = append(msg.ToolCalls, conversation.ToolCall{
				ID: fmt.Sprintf("call_%d_%d", n+1, i), Name: c.Name, Input: args})
		}
	}
	stream(msg.Text, req.OnText)
	return s.costed(Response{Message: msg, Usage: usageOf(in, msg), StopReason: stopReason(msg)}), nil
}

// costed fills a turn's cost from the script's price, as a network
// provider's is filled, so that max_cost stops a scripted run too.
func (s *Script) costed(r Response) Response {
	r.Usage.CostMicroUSD = s.price.Cost(r.Usage)
	return r
}

// pick returns the turn to play: itself, or its first matching alternative.
func (t scriptTurn) pick(results []conversation.Message) scriptTurn {
	for _, a := range t.Alternatives {
		if a.When == nil || a.When.matches(results) {
			return a
		}
	}
	return t
}

func (w *when) matches(results []conversation.Message) bool {
	for _, r := range results {
		if (w.Tool == "" || r.ToolName == w.Tool) && strings.Contains(r.Text, w.Contains) &&
			(w.Error == nil || *w.Error == r.IsError) {
			return true
		}
	}
	return false
}

// lastResults are the tool messages at the end of the conversation.
func lastResults(msgs []conversation.Message) []conversation.Message {
	i := len(msgs)
	for i > 0 && msgs[i-1].Role == conversation.RoleTool {
		i--
	}
	return msgs[i:]
}

func stream(text string, onText func(string)) {
	if onText == nil || text == "" {
		return
	}
	words := strings.SplitAfter(text, " ")
	for _, w := range words {
		onText(w)
	}
}

// usageOf is the usage of a turn that was sent in words and answered msg.
func usageOf(in int, msg conversation.Message) conversation.Usage {
	out := countWords(msg.Text)
	for _, c := range msg.ToolCalls {
		out += countWords(c.Input) + 1
	}
	return conversation.Usage{InputTokens: int64(in), OutputTokens: int64(out)}
}

// summarize answers a summary request. Its usage is counted apart from
// the tally of the agent's conversation, which it does not continue.
func (s *Script) summarize(req Request) Response {
	in := countWords(req.System) + toolWords(req.Tools)
	for _, m := range req.Messages {
		in += countWords(m.Text)
	}
	text := s.summary
	if text == "" {
		text = fmt.Sprintf("Summary: the earlier conversation ran to %d words.", in)
	}
	stream(text, req.OnText)
	return Response{Message: conversation.Message{Role: conversation.RoleAssistant, Text: text},
		Usage: conversation.Usage{InputTokens: int64(in), OutputTokens: int64(countWords(text))}, StopReason: StopEndTurn}
}

func stopReason(msg conversation.Message) string {
	if len(msg.ToolCalls) > 0 {
		return StopToolUse
	}
	return StopEndTurn
}
