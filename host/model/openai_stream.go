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

// oaChunk is one chunk of a streamed chat completion, whose choice has a
// delta, or a whole completion, whose choice has a message of the same
// shape. Only the first choice is read: cairn asks for one.
type oaChunk struct {
	Choices []struct {
		Delta        oaDelta `json:"delta"`
		Message      oaDelta `json:"message"`
		FinishReason string  `json:"finish_reason"`
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

// oaDelta is a part of the assistant's message, or all of it. Refusal is
// the text of a model that declines, in place of Content.
type oaDelta struct {
	Content   string        `json:"content"`
	Refusal   string        `json:"refusal"`
	ToolCalls []oaCallDelta `json:"tool_calls"`
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

// oaTurn gathers a turn from its chunks. Args holds the arguments of each
// call as they grow; refused says the model declined; choices that a
// choice was seen at all.
type oaTurn struct {
	text    strings.Builder
	calls   []conversation.ToolCall
	args    []*strings.Builder
	byIndex map[int]int
	finish  string
	usage   conversation.Usage
	size    turnSize
	refused bool
	choices bool
}

func newOATurn() *oaTurn { return &oaTurn{byIndex: map[int]int{}} }

// errNoChoice is a stream that ended, with `data: [DONE]`, before any
// choice: the server sent no answer at all, which taken as a turn would
// be an empty one that ends the agent's task. Like a cut stream, it is
// asked again.
var errNoChoice = errors.New("the stream ended (data: [DONE]) before any choice: the server sent no answer")

// decodeOpenAIStream reads a streamed chat completion and returns the turn
// it holds, sending text deltas to onText (which may be nil). Tool-call
// arguments are kept exactly as the model wrote them, valid JSON or not.
//
// # Errors
//
// errStreamCut when the stream ends before `data: [DONE]` and before the
// model gave a finish reason; errNoChoice when `data: [DONE]` comes before
// any choice; an error for a chunk that is not JSON; a
// server's error chunk (wrapping ErrRequest for invalid_request_error);
// ErrTooLarge for a turn or a line past cairn's bounds; the reader's
// errors.
func decodeOpenAIStream(r io.Reader, onText func(string)) (Response, error) {
	sse, t := newSSEReader(r), newOATurn()
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
			if !t.choices {
				return Response{}, errNoChoice
			}
			return t.response(), nil
		}
		if err := t.add(ev.Data, onText); err != nil {
			return Response{}, err
		}
	}
}

// decodeOpenAIJSON reads a chat completion that was not streamed, from a
// server that ignored "stream": true, and returns the turn it holds,
// sending its text to onText (which may be nil) in one piece.
//
// # Errors
//
// An error for an answer that is not JSON or has no choice; the server's
// error, as in a stream; ErrTooLarge for an answer past cairn's bounds;
// the reader's errors.
func decodeOpenAIJSON(r io.Reader, onText func(string)) (Response, error) {
	b, err := readWhole(r)
	if err != nil {
		return Response{}, err
	}
	t := newOATurn()
	if err := t.add(b, onText); err != nil {
		return Response{}, err
	}
	if !t.choices {
		return Response{}, fmt.Errorf("an answer without a choice: %s", excerpt(b))
	}
	return t.response(), nil
}

// add reads a chunk, or a whole completion.
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
	t.choices = true
	for _, d := range []oaDelta{ch.Delta, ch.Message} {
		if err := t.addDelta(d, onText); err != nil {
			return err
		}
	}
	if ch.FinishReason != "" {
		t.finish = ch.FinishReason
	}
	return nil
}

// addDelta adds a part of the message. A refusal is kept as the model's
// text: it is all the model said.
func (t *oaTurn) addDelta(d oaDelta, onText func(string)) error {
	if d.Refusal != "" {
		t.refused = true
	}
	for _, s := range []string{d.Content, d.Refusal} {
		if err := t.writeText(s, onText); err != nil {
			return err
		}
	}
	for _, c := range d.ToolCalls {
		if err := t.addCall(c); err != nil {
			return err
		}
	}
	return nil
}

func (t *oaTurn) writeText(s string, onText func(string)) error {
	if s == "" {
		return nil
	}
	if err := t.size.add(len(s)); err != nil {
		return err
	}
	t.text.WriteString(s)
	if onText != nil {
		onText(s)
	}
	return nil
}

func (t *oaTurn) addCall(d oaCallDelta) error {
	if err := t.size.add(len(d.Function.Arguments)); err != nil {
		return err
	}
	i := t.slot(d)
	c := &t.calls[i]
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Name == "" {
		c.Name = d.Function.Name
	}
	t.args[i].WriteString(d.Function.Arguments)
	return nil
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
	t.args = append(t.args, new(strings.Builder))
	return n
}

func (t *oaTurn) response() Response {
	msg := conversation.Message{Role: conversation.RoleAssistant, Text: t.text.String(), ToolCalls: t.calls}
	var salt string
	for i := range msg.ToolCalls {
		msg.ToolCalls[i].Input = t.args[i].String()
		if msg.ToolCalls[i].ID == "" {
			if salt == "" {
				salt = randomHex()
			}
			msg.ToolCalls[i].ID = fmt.Sprintf("call_%s_%d", salt, i)
		}
	}
	stop := openAIStop(t.finish, len(t.calls))
	if t.refused && stop == StopEndTurn {
		stop = StopRefusal
	}
	return Response{Message: msg, Usage: t.usage, StopReason: stop}
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
