// Package model puts the models an agent talks to behind one interface.
// A Provider takes the conversation and the tool schemas and returns the
// model's whole turn: its text and the tool calls it asks for.
//
// The script provider (see script.go) plays turns from a YAML file. It is
// deterministic and needs no network, so it is the embedded default: it
// runs the examples, the tests and crash trials.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"cairn/checkpoint"
)

// Provider is a model.
type Provider interface {
	// Complete sends one request and returns the model's whole turn. Text
	// streams to req.OnText as it arrives.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Request is one request to a model.
type Request struct {
	Model     string
	System    string
	Messages  []checkpoint.Message
	Tools     []Tool
	MaxTokens int
	// OnText receives deltas of the assistant's text. May be nil.
	OnText func(delta string)
}

// Tool is a tool as the model sees it.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Response is the model's turn.
type Response struct {
	// Message has Role assistant, its Text and its ToolCalls, whose Input
	// is the arguments exactly as the model wrote them.
	Message    checkpoint.Message
	Usage      checkpoint.Usage
	StopReason string
}

// Errors a caller branches on.
var (
	// ErrUnavailable: the model could not be reached or kept failing after
	// its retries (rate limits, server errors, dropped streams). Trying
	// again later may work: the loop pauses at its boundary.
	ErrUnavailable = errors.New("model unavailable")
	// ErrRequest: the model refused the request (bad key, bad request).
	// Retrying the same request will not help.
	ErrRequest = errors.New("model refused the request")
)

// Spec says which model to use. It is the `model:` section of an agent file.
type Spec struct {
	// Provider is script, openai or anthropic.
	Provider string `yaml:"provider" json:"provider"`
	// Name is the model's name at the provider.
	Name string `yaml:"name" json:"name,omitempty"`
	// BaseURL overrides the provider's address (OpenAI-compatible servers).
	BaseURL string `yaml:"base_url" json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the API key.
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// Script is the script provider's YAML file.
	Script string `yaml:"script" json:"script,omitempty"`
	// ScriptData is the script itself, instead of a file.
	ScriptData []byte `yaml:"-" json:"-"`
	// MaxRetries bounds retries of a failed request; 0 means the default.
	MaxRetries int `yaml:"max_retries" json:"max_retries,omitempty"`
}

// Open builds the provider a spec names.
//
// # Errors
//
// An unknown provider, or a script that does not read or parse.
func Open(spec Spec) (Provider, error) {
	switch spec.Provider {
	case "script":
		data := spec.ScriptData
		if data == nil {
			if spec.Script == "" {
				return nil, errors.New("script provider: no script file (model.script)")
			}
			b, err := os.ReadFile(spec.Script)
			if err != nil {
				return nil, fmt.Errorf("script provider: %w", err)
			}
			data = b
		}
		return ParseScript(data)
	default:
		return nil, fmt.Errorf("unknown model provider %q (want script)", spec.Provider)
	}
}

// ParseModelFlag reads a --model flag: PROVIDER:NAME, where for the script
// provider NAME is the script's path.
func ParseModelFlag(s string) (Spec, error) {
	provider, name, ok := strings.Cut(s, ":")
	if !ok || provider == "" || name == "" {
		return Spec{}, fmt.Errorf("--model %q: want PROVIDER:NAME, e.g. script:turns.yaml", s)
	}
	if provider == "script" {
		return Spec{Provider: provider, Script: name}, nil
	}
	return Spec{Provider: provider, Name: name}, nil
}
