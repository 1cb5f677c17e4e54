package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// anEvent is one event of a streamed message; which fields are set
// depends on its type.
type anEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage anUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// anUsage counts tokens; input_tokens leaves out the cache's.
type anUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// anTurn gathers a turn from its events. Blocks maps a content block's
// index to its tool call in calls, or to -1 for a text block.
type anTurn struct {
	text   strings.Builder
	calls  []conversation.ToolCall
	blocks map[int]int
	stop   string
	usage  anUsage
	done   bool
}

// decodeAnthropicStream reads a streamed message and returns the turn it
// holds, sending text deltas to onText (which may be nil). Tool inputs are
// kept exactly as the model wrote them, valid JSON or not. Blocks of other
// types (thinking) and unknown events are skipped.
//
// # Errors
//
// errStreamCut when the stream ends before message_stop; an error for an
// event that is not JSON; the server's error event (wrapping ErrRequest
// when it is about the request); the reader's errors.
func decodeAnthropicStream(r io.Reader, onText func(string)) (Response, error) {
	sse, t := newSSEReader(r), &anTurn{blocks: map[int]int{}}
	for !t.done {
		ev, err := sse.Next()
		if errors.Is(err, io.EOF) {
			return Response{}, errStreamCut
		}
		if err != nil {
			return Response{}, err
		}
		if err := t.add(ev, onText); err != nil {
			return Response{}, err
		}
	}
	return t.response(), nil
}

func (t *anTurn) add(ev sseEvent, onText func(string)) error {
	var e anEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("event %s: %w", excerpt(ev.Data), err)
	}
	switch e.Type {
	case "message_start":
		if e.Message != nil {
			t.addUsage(e.Message.Usage)
		}
	case "content_block_start":
		t.start(e, onText)
	case "content_block_delta":
		t.delta(e, onText)
	case "content_block_stop":
		if i, ok := t.blocks[e.Index]; ok && i >= 0 && t.calls[i].Input == "" {
			t.calls[i].Input = "{}" // a tool without input
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			t.stop = e.Delta.StopReason
		}
		if e.Usage != nil {
			t.addUsage(*e.Usage)
		}
	case "message_stop":
		t.done = true
	case "error":
		return anthropicStreamError(e)
	}
	return nil
}

func (t *anTurn) start(e anEvent, onText func(string)) {
	b := e.ContentBlock
	switch {
	case b == nil:
	case b.Type == "text":
		t.blocks[e.Index] = -1
		if t.text.Len() > 0 {
			t.writeText("\n\n", onText)
		}
		t.writeText(b.Text, onText)
	case b.Type == "tool_use":
		t.blocks[e.Index] = len(t.calls)
		t.calls = append(t.calls, conversation.ToolCall{ID: b.ID, Name: b.Name})
	}
}

func (t *anTurn) delta(e anEvent, onText func(string)) {
	i, ok := t.blocks[e.Index]
	if !ok || e.Delta == nil {
		return
	}
	switch {
	case i < 0 && e.Delta.Type == "text_delta":
		t.writeText(e.Delta.Text, onText)
	case i >= 0 && e.Delta.Type == "input_json_delta":
		t.calls[i].Input += e.Delta.PartialJSON
	}
}

func (t *anTurn) writeText(s string, onText func(string)) {
	t.text.WriteString(s)
	if onText != nil && s != "" {
		onText(s)
	}
}

// addUsage keeps the largest count of each kind: message_start carries the
// input, message_delta the output so far (and sometimes the input again).
func (t *anTurn) addUsage(u anUsage) {
	t.usage.InputTokens = max(t.usage.InputTokens, u.InputTokens)
	t.usage.OutputTokens = max(t.usage.OutputTokens, u.OutputTokens)
	t.usage.CacheCreationInputTokens = max(t.usage.CacheCreationInputTokens, u.CacheCreationInputTokens)
	t.usage.CacheReadInputTokens = max(t.usage.CacheReadInputTokens, u.CacheReadInputTokens)
}

func (t *anTurn) response() Response {
	u := t.usage
	return Response{
		Message: conversation.Message{Role: conversation.RoleAssistant, Text: t.text.String(), ToolCalls: t.calls},
		Usage: conversation.Usage{
			InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			OutputTokens:     u.OutputTokens,
			CacheReadTokens:  u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens,
		},
		StopReason: t.stop,
	}
}

// anthropicStreamError is the error an error event reports. Overload, rate
// limits and server errors are retried; the rest is about the request.
func anthropicStreamError(e anEvent) error {
	if e.Error == nil {
		return errors.New("error event without an error")
	}
	err := fmt.Errorf("error in stream: %s: %s", e.Error.Type, e.Error.Message)
	switch e.Error.Type {
	case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
		return retryable(err)
	}
	return fmt.Errorf("%w: %w", ErrRequest, err)
}
