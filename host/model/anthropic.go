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

// Anthropic's address, the API version cairn speaks, and the turn's bound
// when neither the request nor the spec gives one (the API needs one).
const (
	defaultAnthropicURL   = "https://api.anthropic.com"
	anthropicVersion      = "2023-06-01"
	defaultAnthropicLimit = 8192
)

// Anthropic is the provider for the Anthropic messages API
// (POST {base_url}/v1/messages, streamed; an answer a server sends whole,
// as application/json, is read too). The base URL is Spec.BaseURL,
// else $ANTHROPIC_BASE_URL, else Anthropic's; the key is in the variable
// Spec.APIKeyEnv names (ANTHROPIC_API_KEY by default).
type Anthropic struct{ endpoint }

var _ Provider = (*Anthropic)(nil)

// NewAnthropic returns the provider spec describes. It reads the key from
// the environment now and sends nothing until Complete.
func NewAnthropic(spec Spec) *Anthropic {
	return &Anthropic{newEndpoint(spec, "ANTHROPIC_BASE_URL", defaultAnthropicURL, "/v1/messages", "ANTHROPIC_API_KEY")}
}

// Complete sends the conversation and returns the model's turn, retrying
// as the package doc says.
func (p *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	body, err := json.Marshal(p.request(req))
	if err != nil {
		return Response{}, fmt.Errorf("anthropic: encode request: %w", err)
	}
	hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream"},
		"Anthropic-Version": {anthropicVersion}}
	if p.key != "" {
		hdr.Set("X-Api-Key", p.key)
	}
	return p.complete(ctx, "anthropic", hdr, body, decoder{decodeAnthropicStream, decodeAnthropicJSON}, req)
}

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    string      `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
	Stream    bool        `json:"stream"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

// anBlock is a content block: text, tool_use or tool_result.
type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (p *Anthropic) request(req Request) anRequest {
	r := anRequest{Model: cmp.Or(p.spec.Name, req.Model), System: req.System, Stream: true,
		MaxTokens: cmp.Or(req.MaxTokens, p.spec.MaxTokens, defaultAnthropicLimit),
		Messages:  anthropicMessages(Normalize(req.Messages))}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schemaOf(t)})
	}
	return r
}

// anthropicMessages converts a normalized history: tool results become
// tool_result blocks of a user message, messages of the same role in a row
// are merged, and empty blocks and messages, which the API refuses, are
// left out.
func anthropicMessages(msgs []conversation.Message) []anMessage {
	var out []anMessage
	for _, m := range msgs {
		role, blocks := anthropicBlocks(m)
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, anMessage{Role: role, Content: blocks})
	}
	return out
}

func anthropicBlocks(m conversation.Message) (string, []anBlock) {
	var blocks []anBlock
	switch m.Role {
	case conversation.RoleTool:
		return "user", []anBlock{{Type: "tool_result", ToolUseID: anthropicID(m.CallID),
			Content: m.Text, IsError: m.IsError}}
	case conversation.RoleAssistant:
		if m.Text != "" {
			blocks = append(blocks, anBlock{Type: "text", Text: m.Text})
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anBlock{Type: "tool_use", ID: anthropicID(c.ID), Name: c.Name,
				Input: wireInput(c.Input)})
		}
		return "assistant", blocks
	}
	if m.Text != "" {
		blocks = append(blocks, anBlock{Type: "text", Text: m.Text})
	}
	return "user", blocks
}

// anthropicID makes a call id, which another provider may have made, fit
// the pattern Anthropic requires of tool_use ids: [a-zA-Z0-9_-]+.
func anthropicID(id string) string {
	if id == "" {
		return "call"
	}
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, id)
}
