package model

import (
	"encoding/json"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// NotRunResult is the text of the result Normalize gives a call that has
// none.
const NotRunResult = "error: this call was not run and has no result; call it again if it is still needed"

// Normalize returns a copy of msgs that every provider accepts: each tool
// call of an assistant message has exactly one result, and the results
// follow the assistant message directly, in the order of its calls. A call
// without a result gets an error result saying it was not run (NotRunResult);
// a result is looked for up to the next assistant message. Results that
// answer no call of the assistant message before them, and second results
// of a call, are dropped. Other messages keep their order.
func Normalize(msgs []conversation.Message) []conversation.Message {
	out := make([]conversation.Message, 0, len(msgs))
	for i := 0; i < len(msgs); {
		m := msgs[i]
		i++
		if m.Role == conversation.RoleTool {
			continue // a result before any call
		}
		out = append(out, m)
		if m.Role != conversation.RoleAssistant {
			continue
		}
		end := i
		for end < len(msgs) && msgs[end].Role != conversation.RoleAssistant {
			end++
		}
		out = append(out, resultsFor(m.ToolCalls, msgs[i:end])...)
		for _, r := range msgs[i:end] {
			if r.Role != conversation.RoleTool {
				out = append(out, r)
			}
		}
		i = end
	}
	return out
}

// resultsFor picks one result for each call from the messages that follow
// the calls' assistant message.
func resultsFor(calls []conversation.ToolCall, after []conversation.Message) []conversation.Message {
	used := make([]bool, len(after))
	out := make([]conversation.Message, 0, len(calls))
	for _, c := range calls {
		r := conversation.Message{Role: conversation.RoleTool, CallID: c.ID, ToolName: c.Name,
			Text: NotRunResult, IsError: true}
		for j, m := range after {
			if !used[j] && m.Role == conversation.RoleTool && m.CallID == c.ID {
				used[j], r = true, m
				break
			}
		}
		if r.ToolName == "" {
			r.ToolName = c.Name
		}
		out = append(out, r)
	}
	return out
}

// errorPrefix is what the OpenAI wire format puts before an error
// result's text, which it has no flag for.
const errorPrefix = "error: "

// wireInput is a call's arguments as a JSON object, which both wire formats
// want: the arguments themselves when they are one, {} when there are none,
// and otherwise {"_raw_arguments": "<the text as written>"}.
func wireInput(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(t), &obj) == nil && obj != nil {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(map[string]string{"_raw_arguments": s})
	return b
}
