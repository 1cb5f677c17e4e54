package host

import (
	"context"
	"fmt"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/host/model"
)

// AskOptions is a side question put to an agent.
type AskOptions struct {
	ID       string
	Question string
	// Model overrides the agent's model for the question.
	Model *model.Spec
	// OnText receives the answer as it streams. May be nil.
	OnText func(delta string)
}

// Answer is the model's answer to a side question.
type Answer struct {
	Text  string
	Usage conversation.Usage
	// Wanted names the tools the model asked to call; a side question
	// runs none.
	Wanted []string
}

// Ask answers a side question from a copy of the agent's history: the
// model is sent the conversation as of the last committed round, the
// agent's tools as it knows them, and the question. Nothing is run and
// nothing is written to the agent, so it is safe while the agent runs.
//
// # Errors
//
// checkpoint.ErrNotFound for an unknown agent; the store's and the
// model's errors.
func (e *Engine) Ask(ctx context.Context, opts AskOptions) (*Answer, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	rec, err := e.store.Read(opts.ID)
	if err != nil {
		return nil, err
	}
	af, mods, err := e.rebuild(rec.State.Definition)
	if err != nil {
		return nil, fmt.Errorf("ask agent %q: %w", opts.ID, err)
	}
	ts := &toolset{tools: map[string]*tool{}}
	for _, m := range mods {
		if err := ts.add(af, m, nil); err != nil {
			return nil, fmt.Errorf("ask agent %q: %w", opts.ID, err)
		}
	}
	provider, spec, err := openModel(af, opts.Model)
	if err != nil {
		return nil, err
	}
	msgs, earlier, err := askConversation(af, ts.specs, rec.State, opts.Question)
	if err != nil {
		return nil, fmt.Errorf("ask agent %q: %w", opts.ID, err)
	}
	resp, err := provider.Complete(ctx, model.Request{Model: spec.Name, System: af.System, Messages: msgs,
		Tools: ts.specs, OnText: opts.OnText, Earlier: earlier})
	if err != nil {
		return nil, fmt.Errorf("ask agent %q: %w", opts.ID, err)
	}
	a := &Answer{Text: resp.Message.Text, Usage: resp.Usage}
	for _, c := range resp.Message.ToolCalls {
		a.Wanted = append(a.Wanted, c.Name)
	}
	return a, nil
}
