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
	Error *anError `json:"error"`
}

// anError is the error of an error event or an error answer.
type anError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// anUsage counts tokens; input_tokens leaves out the cache's.
type anUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// anTurn gathers a turn from its events. Blocks maps a content block's
// index to its tool call in calls, or to -1 for a text block; args holds
// the input of each call as it grows.
type anTurn struct {
	text   strings.Builder
	calls  []conversation.ToolCall
	args   []*strings.Builder
	blocks map[int]int
	stop   string
	usage  anUsage
	done   bool
	size   turnSize
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
// when it is about the request); ErrTooLarge for a turn or a line past
// cairn's bounds; the reader's errors.
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
		return t.start(e, onText)
	case "content_block_delta":
		return t.delta(e, onText)
	case "content_block_stop":
		if i, ok := t.blocks[e.Index]; ok && i >= 0 && t.args[i].Len() == 0 {
			t.args[i].WriteString("{}") // a tool without input
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
		return anthropicError(e.Error)
	}
	return nil
}

func (t *anTurn) start(e anEvent, onText func(string)) error {
	b := e.ContentBlock
	switch {
	case b == nil:
	case b.Type == "text":
		t.blocks[e.Index] = -1
		return t.startText(b.Text, onText)
	case b.Type == "tool_use":
		t.blocks[e.Index] = len(t.calls)
		t.addCall(b.ID, b.Name)
	}
	return nil
}

// addCall begins a tool call and returns where its input goes.
func (t *anTurn) addCall(id, name string) *strings.Builder {
	t.calls = append(t.calls, conversation.ToolCall{ID: id, Name: name})
	t.args = append(t.args, new(strings.Builder))
	return t.args[len(t.args)-1]
}

// startText begins a text block, apart from the one before it.
func (t *anTurn) startText(s string, onText func(string)) error {
	if t.text.Len() > 0 {
		if err := t.writeText("\n\n", onText); err != nil {
			return err
		}
	}
	return t.writeText(s, onText)
}

func (t *anTurn) delta(e anEvent, onText func(string)) error {
	i, ok := t.blocks[e.Index]
	if !ok || e.Delta == nil {
		return nil
	}
	switch {
	case i < 0 && e.Delta.Type == "text_delta":
		return t.writeText(e.Delta.Text, onText)
	case i >= 0 && e.Delta.Type == "input_json_delta":
		if err := t.size.add(len(e.Delta.PartialJSON)); err != nil {
			return err
		}
		t.args[i].WriteString(e.Delta.PartialJSON)
	}
	return nil
}

func (t *anTurn) writeText(s string, onText func(string)) error {
	if err := t.size.add(len(s)); err != nil {
		return err
	}
	t.text.WriteString(s)
	if onText != nil && s != "" {
		onText(s)
	}
	return nil
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
	for i, a := range t.args {
		t.calls[i].Input = a.String()
	}
	u := t.usage
	return Response{
		Message: conversation.Message{Role: conversation.RoleAssistant, Text: t.text.String(), ToolCalls: t.calls},
		Usage: conversation.Usage{
			InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			OutputTokens:     u.OutputTokens,
			CacheReadTokens:  u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens,
		},
		StopReason: anthropicStop(t.stop, len(t.calls)),
	}
}

// anthropicError is the error an error event, or an error answer,
// reports. Overload, rate limits and server errors are retried; the rest is
// about the request.
func anthropicError(e *anError) error {
	if e == nil {
		return errors.New("error event without an error")
	}
	err := fmt.Errorf("error in stream: %s: %s", e.Type, e.Message)
	switch e.Type {
	case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
		return retryable(err)
	}
	return fmt.Errorf("%w: %w", ErrRequest, err)
}
