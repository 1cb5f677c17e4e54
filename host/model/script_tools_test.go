package model

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Regression: the script model's usage left out the tools' descriptions a
// request carried, though its usage is to count what the request sent: a
// run of one round with the built-in tools counted 7 tokens in. It counts
// every word of the tools' names, descriptions and input schemas too, and
// counts a request's tools anew only when they are other tools.
func TestScriptUsageCountsTheTools(t *testing.T) {
	s, err := ParseScript([]byte("turns:\n  - text: done\n  - text: again\n"))
	if err != nil {
		t.Fatal(err)
	}
	tools := []Tool{
		{Name: "read_file", Description: "Reads a text file.", InputSchema: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}}`)},
		{Name: "grep", Description: "Searches files.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	const toolWords = 1 + 4 + 6 + 1 + 2 + 1
	msgs := []conversation.Message{{Role: conversation.RoleUser, Text: "read the notes"}}
	for _, c := range []struct {
		what  string
		tools []Tool
		want  int64
	}{
		{"with tools", tools, 2 + 3 + toolWords},
		{"the same tools again", tools, 2 + 3 + toolWords},
		{"other tools in a new array", slices.Clone(tools[1:]), 2 + 3 + 1 + 2 + 1},
		{"no tools", nil, 2 + 3},
	} {
		r, err := s.Complete(context.Background(), Request{System: "be brief", Messages: msgs, Tools: c.tools})
		if err != nil {
			t.Fatal(err)
		}
		if r.Usage.InputTokens != c.want {
			t.Errorf("%s: %d tokens in, want %d", c.what, r.Usage.InputTokens, c.want)
		}
	}
}
