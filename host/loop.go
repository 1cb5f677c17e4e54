package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"cairn/checkpoint"
	"cairn/host/model"
)

// run is one run of an agent in progress: the loop's state and everything
// it needs to take the next round.
type run struct {
	agentID, id string
	af          *AgentFile
	tools       *toolset
	provider    model.Provider
	workspace   string
	messages    []checkpoint.Message
	round       int // committed rounds of the agent
	usage       checkpoint.Usage
	toolCalls   int
	started     int // rounds taken by this run
	startedAt   time.Time
	final       string // the model's last text

	mu      sync.Mutex // serialises onEvent across call goroutines
	onEvent EventFunc
}

func (r *run) emit(e Event) {
	if r.onEvent == nil {
		return
	}
	e.Time, e.Agent, e.Run = time.Now().UTC(), r.agentID, r.id
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onEvent(e)
}

// loop takes rounds until the model answers without tool calls, a limit is
// reached, or the context ends. It returns how the run ended and why.
func (r *run) loop(ctx context.Context) (Status, string) {
	for {
		if reason := r.limitReached(); reason != "" {
			return StatusPaused, reason
		}
		more, err := r.takeRound(ctx)
		switch {
		case ctx.Err() != nil:
			return StatusPaused, "interrupted: " + context.Cause(ctx).Error()
		case errors.Is(err, model.ErrUnavailable):
			return StatusPaused, "the model is unavailable: " + err.Error()
		case err != nil:
			return StatusFailed, err.Error()
		case !more:
			return StatusDone, ""
		}
	}
}

// limitReached says which of the run's limits stops it before another round.
func (r *run) limitReached() string {
	l := r.af.Limits
	switch {
	case r.started >= l.maxRounds():
		return fmt.Sprintf("reached max_rounds (%d)", l.maxRounds())
	case l.MaxTokens > 0 && r.usage.Total() >= l.MaxTokens:
		return fmt.Sprintf("reached max_tokens (%d used of %d)", r.usage.Total(), l.MaxTokens)
	case l.MaxTime > 0 && time.Since(r.startedAt) >= time.Duration(l.MaxTime):
		return fmt.Sprintf("reached max_time (%s)", time.Duration(l.MaxTime))
	}
	return ""
}

// takeRound asks the model for a turn, runs the calls it asks for and adds
// their results to the conversation. It reports whether the model asked for
// calls, and so whether another round follows.
func (r *run) takeRound(ctx context.Context) (bool, error) {
	round := r.round + 1
	resp, err := r.provider.Complete(ctx, model.Request{
		Model:    r.af.Model.Name,
		System:   r.af.System,
		Messages: r.messages,
		Tools:    r.tools.specs,
		OnText:   func(s string) { r.emit(Event{Type: EventModelText, Round: round, Text: s}) },
	})
	if err != nil {
		return false, fmt.Errorf("model: %w", err)
	}
	turn := resp.Message
	turn.Role = checkpoint.RoleAssistant
	usage := resp.Usage
	r.emit(Event{Type: EventModelTurn, Round: round, Calls: len(turn.ToolCalls), Usage: &usage})

	results := r.tools.runCalls(ctx, r.workspace, turn.ToolCalls,
		func(c checkpoint.ToolCall) {
			r.emit(Event{Type: EventToolStart, Round: round, Call: &Call{ID: c.ID, Tool: c.Name, Input: c.Input}})
		},
		func(res callResult) { r.emit(Event{Type: EventToolEnd, Round: round, Call: res.event()}) })
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	r.commitRound(turn, usage, results)
	r.emit(Event{Type: EventRoundEnd, Round: round, Usage: &r.usage})
	return len(turn.ToolCalls) > 0, nil
}

// commitRound makes the round part of the conversation.
func (r *run) commitRound(turn checkpoint.Message, usage checkpoint.Usage, results []callResult) {
	r.messages = append(r.messages, turn)
	for _, res := range results {
		r.messages = append(r.messages, res.message())
	}
	r.round++
	r.started++
	r.usage = r.usage.Add(usage)
	r.toolCalls += len(results)
	if turn.Text != "" {
		r.final = turn.Text
	}
}

// event describes a finished call for a tool_end event.
func (res callResult) event() *Call {
	outcome := OutcomeOK
	if res.isError {
		outcome = OutcomeError
	}
	return &Call{ID: res.call.ID, Tool: res.call.Name, Outcome: outcome, Output: res.output,
		DurationMS: float64(res.duration.Microseconds()) / 1000}
}
