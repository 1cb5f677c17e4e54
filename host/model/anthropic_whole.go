package model

import (
	"encoding/json"
	"fmt"
	"io"
)

// anWhole is a message that was not streamed, or an error.
type anWhole struct {
	Type       string         `json:"type"`
	Content    []anWholeBlock `json:"content"`
	StopReason string         `json:"stop_reason"`
	Usage      anUsage        `json:"usage"`
	Error      *anError       `json:"error"`
}

// anWholeBlock is a content block of a message that was not streamed.
type anWholeBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// decodeAnthropicJSON reads a message that was not streamed, from a server
// that ignored "stream": true, and returns the turn it holds, sending its
// text to onText (which may be nil) a block at a time. Blocks of other
// types (thinking) are skipped, as in a stream.
//
// # Errors
//
// An error for an answer that is not JSON or not a message; the server's
// error, as in a stream; ErrTooLarge for an answer past cairn's bounds;
// the reader's errors.
func decodeAnthropicJSON(r io.Reader, onText func(string)) (Response, error) {
	b, err := readWhole(r)
	if err != nil {
		return Response{}, err
	}
	var m anWhole
	if err := json.Unmarshal(b, &m); err != nil {
		return Response{}, fmt.Errorf("answer %s: %w", excerpt(b), err)
	}
	if m.Type == "error" || m.Error != nil {
		return Response{}, anthropicError(m.Error)
	}
	if m.Type != "message" && m.StopReason == "" && m.Content == nil {
		return Response{}, fmt.Errorf("an answer that is not a message: %s", excerpt(b))
	}
	t := &anTurn{blocks: map[int]int{}, stop: m.StopReason}
	t.addUsage(m.Usage)
	for _, c := range m.Content {
		if err := t.addBlock(c, onText); err != nil {
			return Response{}, err
		}
	}
	return t.response(), nil
}

// addBlock adds a whole content block: text, or a tool call whose input
// is kept as the server sent it ({} when it sent none).
func (t *anTurn) addBlock(b anWholeBlock, onText func(string)) error {
	switch b.Type {
	case "text":
		return t.startText(b.Text, onText)
	case "tool_use":
		in := string(b.Input)
		if in == "" || in == "null" {
			in = "{}"
		}
		if err := t.size.add(len(in)); err != nil {
			return err
		}
		t.addCall(b.ID, b.Name).WriteString(in)
	}
	return nil
}
