package model

import (
	"encoding/json"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// cairn estimates tokens the same way everywhere it bounds a request (the
// agent file's context budget, its tests, its docs): no provider's
// tokenizer is at hand, and a budget must be checked before the request
// is sent.

// Overhead is what the estimate adds for each message, tool call and tool
// description besides its text: the role and the framing a wire format
// puts around it.
const Overhead = 4

// EstimateTokens is the estimated token count of a text: a quarter of its
// UTF-8 bytes, rounded up, and never fewer than its whitespace-separated
// words. English prose runs about four bytes a token; text of many short
// words runs nearer a token a word.
func EstimateTokens(s string) int {
	return max((len(s)+3)/4, countWords(s))
}

// EstimateMessage is the estimated token count of one message: its text,
// the call it answers, and each call it asks for.
func EstimateMessage(m conversation.Message) int {
	n := Overhead + EstimateTokens(m.Text) + EstimateTokens(m.CallID) + EstimateTokens(m.ToolName)
	if m.IsError {
		n += errorPrefixTokens
	}
	for _, c := range m.ToolCalls {
		n += Overhead + EstimateTokens(c.ID) + EstimateTokens(c.Name) + inputTokens(c.Input)
	}
	return n
}

// errorPrefixTokens is what the prefix a wire format may put before an
// error result's text ("error: ", see openAIMessages) adds.
var errorPrefixTokens = EstimateTokens(errorPrefix)

// inputTokens is the estimate of a call's arguments as the wire sends
// them (see wireInput): arguments that are no JSON object go wrapped and
// escaped, which can make them several times as long as written.
func inputTokens(s string) int {
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return EstimateTokens(t)
	}
	return EstimateTokens(string(wireInput(s)))
}

// EstimateTool is the estimated token count of a tool's description.
func EstimateTool(t Tool) int {
	return Overhead + EstimateTokens(t.Name) + EstimateTokens(t.Description) + EstimateTokens(string(t.InputSchema))
}

// EstimateRequest is the estimated token count of everything a request
// sends: its system prompt, its tools and its messages.
func EstimateRequest(req Request) int {
	n := Overhead + EstimateTokens(req.System)
	for _, t := range req.Tools {
		n += EstimateTool(t)
	}
	for _, m := range req.Messages {
		n += EstimateMessage(m)
	}
	return n
}
