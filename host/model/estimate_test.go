package model

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

func TestEstimateTokens(t *testing.T) {
	for s, want := range map[string]int{
		"":                      0,
		"abcd":                  1,
		"abcde":                 2,
		"a b c d e f":           6, // more words than quarters of bytes
		strings.Repeat("x", 40): 10,
		"héllo wörld":           4, // 13 bytes
	} {
		if got := EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
	m := conversation.Message{Role: conversation.RoleAssistant, Text: "abcd",
		ToolCalls: []conversation.ToolCall{{ID: "call_1", Name: "read_file", Input: `{"path":"a"}`}}}
	if got, want := EstimateMessage(m), Overhead+1+Overhead+2+3+3; got != want {
		t.Errorf("EstimateMessage = %d, want %d", got, want)
	}
	req := Request{System: "be brief", Messages: []conversation.Message{m}, Tools: []Tool{{Name: "read_file", Description: "reads"}}}
	if got, want := EstimateRequest(req), Overhead+2+(Overhead+3+2)+EstimateMessage(m); got != want {
		t.Errorf("EstimateRequest = %d, want %d", got, want)
	}
}

// The estimate counts what the wire sends, not what was written: a call's
// arguments that are no JSON object go wrapped and escaped (12 KB of
// quotes once went out as 24 KB, counted as 12), and OpenAI's messages put
// "error: " before an error result.
func TestEstimateCountsWhatTheWireSends(t *testing.T) {
	raw := strings.Repeat(`"<&>`, 3000)
	m := conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c", Name: "n", Input: raw}}}
	sent := openAIMessages("", []conversation.Message{m})[0].ToolCalls[0].Function.Arguments
	if got, least := EstimateMessage(m), EstimateTokens(sent); got < least || len(sent) < 2*len(raw) {
		t.Errorf("arguments of %d bytes sent as %d: estimated %d tokens, want at least %d", len(raw), len(sent), got, least)
	}
	e := conversation.Message{Role: conversation.RoleTool, CallID: "c", ToolName: "n", Text: "no such file", IsError: true}
	text := openAIMessages("", []conversation.Message{e})[0].Content
	if got, least := EstimateMessage(e), Overhead+EstimateTokens(*text)+EstimateTokens("c")+EstimateTokens("n"); got < least {
		t.Errorf("an error result sent as %q: estimated %d tokens, want at least %d", *text, got, least)
	}
}

// The script plays the turn a request has reached counting the turns it
// leaves out, and answers a summary request without playing one.
func TestScriptPlaysPastACut(t *testing.T) {
	s, err := ParseScript([]byte("summary: All read.\nturns:\n  - text: one\n  - text: two\n  - text: three\n"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := []conversation.Message{{Role: conversation.RoleUser, Text: "go"}, {Role: conversation.RoleAssistant, Text: "two"}}
	resp, err := s.Complete(context.Background(), Request{Messages: msgs, Earlier: 1})
	if err != nil || resp.Message.Text != "three" {
		t.Fatalf("after a cut of one turn: %q, %v; want the third turn", resp.Message.Text, err)
	}
	resp, err = s.Complete(context.Background(), Request{Messages: msgs, Purpose: PurposeSummary})
	if err != nil || resp.Message.Text != "All read." || resp.Usage.InputTokens != 2 || len(resp.Message.ToolCalls) != 0 {
		t.Fatalf("summary: %+v, %v", resp, err)
	}
	plain, _ := ParseScript([]byte("turns: []\n"))
	resp, _ = plain.Complete(context.Background(), Request{Messages: msgs, Purpose: PurposeSummary})
	if !strings.Contains(resp.Message.Text, "ran to 2 words") {
		t.Errorf("default summary: %q", resp.Message.Text)
	}
}
