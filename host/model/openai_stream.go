package model

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// oaChunk is one chunk of a streamed chat completion. Only the first
// choice is read: cairn asks for one.
type oaChunk struct {
	Choices []struct {
		Delta struct {
			Content   string        `json:"content"`
			ToolCalls []oaCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// oaCallDelta is a fragment of a tool call. Index says which call it
// continues; some servers (older Ollama) leave it out.
type oaCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// oaTurn gathers a turn from its chunks.
type oaTurn struct {
	text    strings.Builder
	calls   []conversation.ToolCall
	byIndex map[int]int
	finish  string
	usage   conversation.Usage
}

// decodeOpenAIStream reads a streamed chat completion and returns the turn
// it holds, sending text deltas to onText (which may be nil). Tool-call
// arguments are kept exactly as the model wrote them, valid JSON or not.
//
// # Errors
//
// errStreamCut when the stream ends before `data: [DONE]` and before the
// model gave a finish reason; an error for a chunk that is not JSON; a
// server's error chunk (wrapping ErrRequest for invalid_request_error); the
// reader's errors.
func decodeOpenAIStream(r io.Reader, onText func(string)) (Response, error) {
	sse, t := newSSEReader(r), &oaTurn{byIndex: map[int]int{}}
	for {
		ev, err := sse.Next()
		if errors.Is(err, io.EOF) && t.finish != "" {
			return t.response(), nil // a server that does not send [DONE]
		}
		if errors.Is(err, io.EOF) {
			return Response{}, errStreamCut
		}
		if err != nil {
			return Response{}, err
		}
		if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
			return t.response(), nil
		}
		if err := t.add(ev.Data, onText); err != nil {
			return Response{}, err
		}
	}
}

func (t *oaTurn) add(data []byte, onText func(string)) error {
	var c oaChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("chunk %s: %w", excerpt(data), err)
	}
	if c.Error != nil {
		err := fmt.Errorf("error in stream: %s: %s", c.Error.Type, c.Error.Message)
		if c.Error.Type == "invalid_request_error" {
			return fmt.Errorf("%w: %w", ErrRequest, err)
		}
		return err
	}
	if u := c.Usage; u != nil {
		t.usage = conversation.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
			CacheReadTokens: u.PromptTokensDetails.CachedTokens}
	}
	if len(c.Choices) == 0 {
		return nil
	}
	ch := c.Choices[0]
	if d := ch.Delta.Content; d != "" {
		t.text.WriteString(d)
		if onText != nil {
			onText(d)
		}
	}
	for _, d := range ch.Delta.ToolCalls {
		t.addCall(d)
	}
	if ch.FinishReason != "" {
		t.finish = ch.FinishReason
	}
	return nil
}

func (t *oaTurn) addCall(d oaCallDelta) {
	c := &t.calls[t.slot(d)]
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Name == "" {
		c.Name = d.Function.Name
	}
	c.Input += d.Function.Arguments
}

// slot is the index in t.calls of the call a fragment continues, appending
// a call when it starts one. Without an index, a fragment starts a call
// when it brings another id, or a name while the last call has one.
func (t *oaTurn) slot(d oaCallDelta) int {
	n := len(t.calls)
	if d.Index != nil {
		if i, ok := t.byIndex[*d.Index]; ok {
			return i
		}
		t.byIndex[*d.Index] = n
	} else if n > 0 {
		last := t.calls[n-1]
		continues := (d.ID != "" && d.ID == last.ID) || (d.ID == "" && (d.Function.Name == "" || last.Name == ""))
		if continues {
			return n - 1
		}
	}
	t.calls = append(t.calls, conversation.ToolCall{})
	return n
}

func (t *oaTurn) response() Response {
	msg := conversation.Message{Role: conversation.RoleAssistant, Text: t.text.String(), ToolCalls: t.calls}
	var salt string
	for i := range msg.ToolCalls {
		if msg.ToolCalls[i].ID == "" {
			if salt == "" {
				salt = randomHex()
			}
			msg.ToolCalls[i].ID = fmt.Sprintf("call_%s_%d", salt, i)
		}
	}
	return Response{Message: msg, Usage: t.usage, StopReason: openAIStop(t.finish, len(t.calls))}
}

// openAIStop names a finish reason as the script and Anthropic do.
func openAIStop(reason string, calls int) string {
	switch {
	case reason == "tool_calls" || (calls > 0 && reason == "stop"):
		return "tool_use"
	case reason == "stop" || reason == "":
		return "end_turn"
	case reason == "length":
		return "max_tokens"
	}
	return reason
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
