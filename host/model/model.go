package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Provider is a model.
type Provider interface {
	// Complete sends one request and returns the model's whole turn. Text
	// streams to req.OnText as it arrives.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Request is one request to a model.
type Request struct {
	// Model is the model's name. A provider opened with a Spec.Name uses
	// that name instead, so that a model chosen on the command line wins.
	Model     string
	System    string
	Messages  []conversation.Message
	Tools     []Tool
	MaxTokens int
	// OnText receives deltas of the assistant's text. May be nil.
	OnText func(delta string)
	// OnRetry, when set, is called before each wait between attempts, on
	// the goroutine of Complete: attempt is the number of the attempt that
	// failed (from 1), err why (it wraps ErrUnavailable's causes, not
	// ErrUnavailable, and names the provider; keys are masked), wait how
	// long until the next attempt. Text an attempt streamed to OnText
	// before it failed is streamed again by the next one. It should return
	// quickly: the wait starts when it returns.
	OnRetry func(attempt int, err error, wait time.Duration)
	// Earlier is how many of the model's turns came before Messages and
	// are left out of it, to keep the request within a context budget; 0
	// when Messages is the whole conversation.
	Earlier int
	// Purpose is what the request is for: PurposeTurn, the agent's next
	// turn, or PurposeSummary, a summary of the conversation's oldest
	// turns, which asks for text and offers no tools.
	Purpose Purpose
}

// Purpose is what a request is for.
type Purpose string

// The purposes of a request.
const (
	PurposeTurn    Purpose = ""
	PurposeSummary Purpose = "summary"
)

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
	Message conversation.Message
	Usage   conversation.Usage
	// StopReason is why the turn ended, named the same by every provider:
	// StopEndTurn, StopToolUse, StopLength or StopRefusal. A reason the
	// provider gives that is none of these is passed on as it is.
	StopReason string
}

// The stop reasons of a Response.
const (
	// StopEndTurn: the model finished its turn.
	StopEndTurn = "end_turn"
	// StopToolUse: the model asks for the tool calls of its turn.
	StopToolUse = "tool_use"
	// StopLength: the turn reached its bound of tokens (max_tokens) and
	// was cut off there. Its text may end mid-sentence and the arguments
	// of its last tool call may be incomplete.
	StopLength = "length"
	// StopRefusal: the model, or the provider's filter, declined to
	// answer. Message.Text holds the model's explanation when it gave one.
	StopRefusal = "refusal"
)

// Errors a caller branches on.
var (
	// ErrUnavailable: the model could not be reached or kept failing after
	// its retries (rate limits, server errors, dropped streams). Trying
	// again later may work: the loop pauses at its boundary.
	ErrUnavailable = errors.New("model unavailable")
	// ErrRequest: the model refused the request (bad key, bad request).
	// Retrying the same request will not help.
	ErrRequest = errors.New("model refused the request")
	// ErrTooLarge: the model's answer went past one of cairn's bounds: a
	// line of an event stream longer than 8 MiB, a turn of more than
	// 16 MiB of text and tool-call arguments, or a non-streamed answer of
	// more than 32 MiB. The same request would give the same answer, so it
	// is not retried.
	ErrTooLarge = errors.New("model answer too large")
	// ErrScript: the script provider's file does not read as a script
	// (see ParseScript). The error names the file and the line to change.
	ErrScript = errors.New("script file does not read")
)

// scriptError is an error of a script file, which is ErrScript.
type scriptError struct{ error }

func (e scriptError) Is(target error) bool { return target == ErrScript }
func (e scriptError) Unwrap() error        { return e.error }

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
	// MaxRetries bounds retries of a failed request: 0 means the default
	// (4), a negative number none.
	MaxRetries int `yaml:"max_retries" json:"max_retries,omitempty"`
	// MaxTokens bounds the length of each turn when the request does not;
	// 0 means the provider's default (Anthropic needs one: 8192).
	MaxTokens int `yaml:"max_tokens" json:"max_tokens,omitempty"`
	// Timeout bounds how long the server may keep silent: before the
	// headers of its answer, and between any two reads of the answer
	// once it has started (a stream that stalls). 0 means the default,
	// 2 minutes. A silence that long fails the attempt, which is retried
	// like a dropped connection.
	Timeout time.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// Price, when set, fills Usage.CostMicroUSD.
	Price *Price `yaml:"price" json:"price,omitempty"`
}

// Providers are the names Open knows.
var Providers = []string{"script", "openai", "anthropic"}

// Open builds the provider a spec names.
//
// # Errors
//
// An unknown provider, or a script that does not read or parse: ErrScript
// for a script file that reads but is no script.
func Open(spec Spec) (Provider, error) {
	switch spec.Provider {
	case "script":
		return openScript(spec)
	case "openai":
		return NewOpenAI(spec), nil
	case "anthropic":
		return NewAnthropic(spec), nil
	default:
		return nil, fmt.Errorf("unknown model provider %q (want %s)", spec.Provider, strings.Join(Providers, ", "))
	}
}

func openScript(spec Spec) (Provider, error) {
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
	s, err := ParseScript(data)
	if err != nil && spec.ScriptData == nil {
		return nil, scriptError{fmt.Errorf("script file %s: %w", spec.Script, err)}
	}
	if err != nil {
		return nil, err
	}
	s.price = spec.Price
	return s, nil
}

// ParseModelFlag reads a --model flag: PROVIDER:NAME, where for the script
// provider NAME is the script's path. NAME may itself hold colons
// (openai:llama3.2:3b names Ollama's llama3.2:3b).
//
// # Errors
//
// A flag without both parts, or an unknown provider.
func ParseModelFlag(s string) (Spec, error) {
	provider, name, ok := strings.Cut(s, ":")
	if !ok || provider == "" || name == "" {
		return Spec{}, fmt.Errorf("--model %q: want PROVIDER:NAME, e.g. openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or script:turns.yaml", s)
	}
	switch provider {
	case "script":
		return Spec{Provider: provider, Script: name}, nil
	case "openai", "anthropic":
		return Spec{Provider: provider, Name: name}, nil
	}
	return Spec{}, fmt.Errorf("--model %q: unknown provider %q (want %s)", s, provider, strings.Join(Providers, ", "))
}

// Override returns the spec to use when o, from the command line, overrides
// s, from the agent file. With the same provider, the agent file's address,
// key variable, retries, token bound and timeout are kept, and its price
// too if the model's name is unchanged; with another provider, o stands
// alone.
func (s Spec) Override(o Spec) Spec {
	if o.Provider != s.Provider {
		return o
	}
	if o.BaseURL == "" {
		o.BaseURL = s.BaseURL
	}
	if o.APIKeyEnv == "" {
		o.APIKeyEnv = s.APIKeyEnv
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = s.MaxRetries
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = s.MaxTokens
	}
	if o.Timeout == 0 {
		o.Timeout = s.Timeout
	}
	if o.Price == nil && o.Name == s.Name {
		o.Price = s.Price
	}
	return o
}
