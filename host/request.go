package host

import (
	"fmt"
	"slices"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/host/model"
)

// request is what a round sends the model: the system prompt, the tools
// and the conversation msgs, which leaves out the model's first earlier
// turns (see conversation).
func (r *run) request(round int, msgs []conversation.Message, earlier int) model.Request {
	return model.Request{
		Model:    r.modelName,
		System:   r.af.System,
		Messages: msgs,
		Earlier:  earlier,
		Tools:    r.tools.specs,
		OnText:   func(s string) { r.emit(Event{Type: EventModelText, Round: round, Text: s}) },
		OnRetry: func(attempt int, err error, wait time.Duration) {
			r.emit(Event{Type: EventWarning, Round: round, Text: fmt.Sprintf(
				"model: attempt %d failed (%v); trying again in %s, and any text it had sent comes again", attempt, err, wait.Round(time.Millisecond))})
		},
	}
}

// requestMessages is the conversation a round sends: the state's messages
// and the round's pending ones. A round with nothing pending (every round
// but the first after a prompt) sends the state's own slice, clipped so
// that nothing appended to it can reach the state's array: building the
// request costs nothing that grows with the history, and the script model
// sees the same array grow round by round (see model.Script). Providers
// only read a request's messages.
func (r *run) requestMessages() []conversation.Message {
	msgs := slices.Clip(r.state().Messages)
	if len(r.pending) == 0 {
		return msgs
	}
	return append(msgs, r.pending...)
}
