package model

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// defaultOpenAIURL is OpenAI's own service.
const defaultOpenAIURL = "https://api.openai.com/v1"

// OpenAI is the provider for OpenAI-compatible chat completions
// (POST {base_url}/chat/completions, streamed; an answer a server sends
// whole, as application/json, is read too). The base URL is
// Spec.BaseURL, else $OPENAI_BASE_URL, else OpenAI's; the key, sent as a
// bearer token, is in the variable Spec.APIKeyEnv names (OPENAI_API_KEY by
// default), and no key is sent when it is empty, as local servers want.
type OpenAI struct{ endpoint }

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns the provider spec describes. It reads the key from the
// environment now and sends nothing until Complete.
func NewOpenAI(spec Spec) *OpenAI {
	return &OpenAI{newEndpoint(spec, "OPENAI_BASE_URL", defaultOpenAIURL, "/chat/completions", "OPENAI_API_KEY")}
}

// Complete sends the conversation and returns the model's turn, retrying
// as the package doc says.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	body, err := json.Marshal(p.request(req))
	if err != nil {
		return Response{}, fmt.Errorf("openai: encode request: %w", err)
	}
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}}
	if p.key != "" {
		hdr.Set("Authorization", "Bearer "+p.key)
	}
	return p.complete(ctx, "openai", hdr, body, decoder{decodeOpenAIStream, decodeOpenAIJSON}, req)
}

type oaRequest struct {
	Model         string      `json:"model"`
	Messages      []oaMessage `json:"messages"`
	Tools         []oaTool    `json:"tools,omitempty"`
	Stream        bool        `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int `json:"max_tokens,omitempty"`
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
}

type oaMessage struct {
	Role       string   `json:"role"`
	Content    *string  `json:"content"`
	ToolCalls  []oaCall `json:"tool_calls,omitempty"`
	ToolCallID string   `json:"tool_call_id,omitempty"`
}

type oaCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// request is the wire request. OpenAI's own service wants the turn's bound
// as max_completion_tokens; compatible servers know max_tokens.
func (p *OpenAI) request(req Request) oaRequest {
	r := oaRequest{Model: cmp.Or(p.spec.Name, req.Model), Stream: true,
		Messages: openAIMessages(req.System, Normalize(req.Messages))}
	r.StreamOptions.IncludeUsage = true
	for _, t := range req.Tools {
		var w oaTool
		w.Type, w.Function.Name, w.Function.Description = "function", t.Name, t.Description
		w.Function.Parameters = schemaOf(t)
		r.Tools = append(r.Tools, w)
	}
	if n := cmp.Or(req.MaxTokens, p.spec.MaxTokens); n > 0 {
		if strings.HasPrefix(p.url, defaultOpenAIURL) {
			r.MaxCompletionTokens = n
		} else {
			r.MaxTokens = n
		}
	}
	return r
}

// openAIMessages converts a normalized history. A failed call's result is
// marked in its text, which is all the format has for it.
func openAIMessages(system string, msgs []conversation.Message) []oaMessage {
	var out []oaMessage
	if system != "" {
		out = append(out, oaMessage{Role: "system", Content: &system})
	}
	for _, m := range msgs {
		text := m.Text
		w := oaMessage{Role: string(m.Role), Content: &text}
		switch m.Role {
		case conversation.RoleAssistant:
			if text == "" && len(m.ToolCalls) > 0 {
				w.Content = nil
			}
			for _, c := range m.ToolCalls {
				var wc oaCall
				wc.ID, wc.Type, wc.Function.Name = c.ID, "function", c.Name
				wc.Function.Arguments = string(wireInput(c.Input))
				w.ToolCalls = append(w.ToolCalls, wc)
			}
		case conversation.RoleTool:
			w.ToolCallID = m.CallID
			if m.IsError && !strings.HasPrefix(strings.ToLower(text), "error") {
				text = errorPrefix + text
			}
		}
		out = append(out, w)
	}
	return out
}

// schemaOf is a tool's input schema, or the schema of any object.
func schemaOf(t Tool) json.RawMessage {
	if len(t.InputSchema) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return t.InputSchema
}
