package model

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

const testScript = `
turns:
  - text: looking
    tool_calls:
      - {name: read_file, input: {path: a.txt}}
      - {name: bad, input_json: '{"x": '}
  - alternatives:
      - when: {tool: read_file, contains: TODO}
        text: open items
      - when: {error: true}
        text: something failed
      - text: all clear
`

func complete(t *testing.T, s *Script, msgs ...conversation.Message) Response {
	t.Helper()
	r, err := s.Complete(context.Background(), Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestScriptTurns(t *testing.T) {
	s, err := ParseScript([]byte(testScript))
	if err != nil {
		t.Fatal(err)
	}
	user := conversation.Message{Role: conversation.RoleUser, Text: "go"}
	first := complete(t, s, user)
	calls := first.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "call_1_0" || calls[0].Input != `{"path":"a.txt"}` || calls[1].Input != `{"x": ` {
		t.Fatalf("first turn calls %+v", calls)
	}
	if first.Usage.InputTokens != 1 || first.Usage.OutputTokens == 0 {
		t.Errorf("usage %+v", first.Usage)
	}
	asst := first.Message
	tool := func(name, text string, isErr bool) conversation.Message {
		return conversation.Message{Role: conversation.RoleTool, ToolName: name, Text: text, IsError: isErr}
	}
	tests := []struct {
		results []conversation.Message
		want    string
	}{
		{[]conversation.Message{tool("read_file", "TODO: x", false), tool("bad", "bad JSON", true)}, "open items"},
		{[]conversation.Message{tool("read_file", "done", false), tool("bad", "bad JSON", true)}, "something failed"},
		{[]conversation.Message{tool("read_file", "done", false), tool("bad", "fine", false)}, "all clear"},
	}
	for _, tt := range tests {
		msgs := append([]conversation.Message{user, asst}, tt.results...)
		if got := complete(t, s, msgs...).Message.Text; got != tt.want {
			t.Errorf("after %v: %q, want %q", tt.results, got, tt.want)
		}
	}
	// Past the last turn the model ends the run with a text, no calls.
	end := complete(t, s, user, asst, tool("read_file", "", false), asst)
	if len(end.Message.ToolCalls) != 0 || !strings.Contains(end.Message.Text, "no more turns") {
		t.Errorf("exhausted script: %+v", end.Message)
	}
}

// The turn depends only on the conversation sent: the same conversation
// gets the same turn, however many times it is asked (resume and replay).
func TestScriptIsStateless(t *testing.T) {
	s, _ := ParseScript([]byte(testScript))
	user := conversation.Message{Role: conversation.RoleUser, Text: "go"}
	a := complete(t, s, user)
	b := complete(t, s, user)
	if a.Message.ToolCalls[0].ID != b.Message.ToolCalls[0].ID || a.Message.Text != b.Message.Text {
		t.Fatal("asking twice gave different turns")
	}
}

func TestScriptStreamsText(t *testing.T) {
	s, _ := ParseScript([]byte("turns:\n  - text: one two three\n"))
	var got []string
	_, err := s.Complete(context.Background(), Request{OnText: func(d string) { got = append(got, d) }})
	if err != nil || strings.Join(got, "") != "one two three" || len(got) != 3 {
		t.Fatalf("streamed %q, %v", got, err)
	}
}

func TestScriptErrors(t *testing.T) {
	tests := []struct{ script, msg string }{
		{"turns:\n  - tool_calls:\n      - {input: {}}\n", "line 3: a tool call has no name"},
		{"turns:\n  - tool_calls:\n      - {name: x, input: [1, 2]}\n", "line 3: input of x is not a mapping"},
		{"turns:\n  - txet: typo\n", "txet"},
		{"turns: [\n", "script"},
	}
	for _, tt := range tests {
		_, err := ParseScript([]byte(tt.script))
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%q: got %v, want an error with %q", tt.script, err, tt.msg)
		}
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add([]byte(testScript))
	f.Add([]byte("turns: []"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseScript(b)
		if err != nil {
			return
		}
		// A long script's first turn is parsed when played.
		if _, err := s.Complete(context.Background(), Request{}); err != nil && s.lazy == nil {
			t.Fatal(err)
		}
	})
}
