package host

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

// window is what a run under a context budget sends the model: a head (the
// task's prompt, when a cut left it behind, and the summary or the note
// that stands in for the messages cut), then State.Messages from the last
// cut on, tool results cut to their bound. It is built once from the state
// and then grows by what each round adds, with a running estimate of its
// tokens, so a round costs what it adds, not the history; a cut rebuilds
// it from the state, which costs the window, not the history.
//
// Everything in it follows from the state alone, so a resumed run builds
// the very request the interrupted one would have sent.
type window struct {
	spec  ContextSpec
	fixed int // estimated tokens of the system prompt and the tools
	from  int // State.Messages[from:] are sent after the head
	seen  int // State.Messages[from:seen] are in msgs
	heads int // msgs[:heads] is the head
	// msgs is the head, then State.Messages[from:seen] as sent; costs are
	// their estimated tokens and tokens is fixed plus their sum.
	msgs    []conversation.Message
	costs   []int
	tokens  int
	earlier int // the model's turns in State.Messages[:from]
	task    int // the index in State.Messages of the task's prompt, or -1
	// readers are the tools the request offers that a cut result's note
	// may point to.
	readers readers
}

// newWindow starts a run's window on its state.
//
// # Errors
//
// ErrContextBudget when the system prompt and the tools leave no room for
// a conversation in half the budget.
func newWindow(spec ContextSpec, system string, tools []model.Tool, st *checkpoint.State) (*window, error) {
	if err := spec.roomFor(system, tools); err != nil {
		return nil, err
	}
	fixed := model.EstimateRequest(model.Request{System: system, Tools: tools})
	if c := st.LastCompaction(); c != nil && (c.From > len(st.Messages) || c.Pinned >= c.From || c.Pinned < -1) {
		return nil, fmt.Errorf("the agent's state cuts its context at message %d (task at %d) of %d: %w",
			c.From, c.Pinned, len(st.Messages), checkpoint.ErrCorrupt)
	}
	w := &window{spec: spec, fixed: fixed, readers: readersIn(tools)}
	w.reset(st)
	return w, nil
}

// reset builds the window from the state's last cut, which newWindow has
// checked or this run made.
func (w *window) reset(st *checkpoint.State) {
	w.msgs, w.costs, w.tokens = w.msgs[:0], w.costs[:0], w.fixed
	w.from, w.earlier, w.task = 0, 0, -1
	if c := st.LastCompaction(); c != nil {
		w.from, w.earlier, w.task = c.From, c.Turns, c.Pinned
		for _, m := range headOf(st, c) {
			w.add(m)
		}
	}
	w.heads, w.seen = len(w.msgs), w.from
	w.sync(st)
}

// sync adds the messages the state gained since the last request. A
// round's tool results are shown cut to their shares (see shares), which
// follow from the round's messages alone, so a window built anew from the
// state shows them as this one does.
func (w *window) sync(st *checkpoint.State) {
	var caps []int
	for i := w.seen; i < len(st.Messages); i++ {
		m := st.Messages[i]
		switch {
		case m.Role == conversation.RoleUser && !m.Note:
			w.task = i
		case m.Role == conversation.RoleTool && len(caps) == 0:
			first := i // the round's first result
			for first > 0 && st.Messages[first-1].Role == conversation.RoleTool {
				first--
			}
			caps = w.shares(st, first)[i-first:]
		}
		if m.Role == conversation.RoleTool {
			m, caps = w.shown(m, caps[0]), caps[1:]
		}
		w.add(m)
	}
	w.seen = len(st.Messages)
}

func (w *window) add(m conversation.Message) {
	c := model.EstimateMessage(m)
	w.msgs, w.costs, w.tokens = append(w.msgs, m), append(w.costs, c), w.tokens+c
}

// shown is a tool result as a request shows it: cut, with a note, when
// its text is longer than limit estimated tokens.
func (w *window) shown(m conversation.Message, limit int) conversation.Message {
	if model.EstimateTokens(m.Text) > limit {
		m.Text = cutResult(m.Text, limit, w.readers)
	}
	return m
}

// shares are the estimated tokens the texts of a round's tool results,
// State.Messages[i:] up to the next message that is not one, may take in a
// request. Each may take max_tool_result; together they take what is
// left of the budget once the system prompt, the tools, the head a cut
// needs (with the task's prompt) and the round's other messages are sent,
// so that a round alone always fits: results that fit an even share of
// it are shown whole, the others share the rest evenly. A share is never
// below the least max_tool_result, which holds the note of a cut result;
// a round of so many results that those do not fit is too large for the
// budget (see fit).
func (w *window) shares(st *checkpoint.State, i int) []int {
	j := i
	for j < len(st.Messages) && st.Messages[j].Role == conversation.RoleTool {
		j++
	}
	left := w.spec.Budget - w.fixed - w.headReserve(st, 0)
	k := i - 1 // the round's turn, and the prompts and notes before it
	for ; k >= 0 && (k == i-1 || st.Messages[k].Role == conversation.RoleUser); k-- {
		left -= model.EstimateMessage(st.Messages[k])
	}
	if w.task >= 0 && w.task <= k {
		left -= model.EstimateMessage(st.Messages[w.task])
	}
	want := make([]int, j-i)
	for n, m := range st.Messages[i:j] {
		want[n] = model.EstimateTokens(m.Text)
		left -= model.EstimateMessage(m) - want[n]
	}
	return shareOut(want, left, w.spec.maxToolResult(), minToolResult)
}

// shareOut shares total among texts of want tokens each: each gets what it
// wants if that is within an even share of what is left and within
// ceiling, else that share, bounded by ceiling and at least floor.
func shareOut(want []int, total, ceiling, floor int) []int {
	order := make([]int, len(want))
	for n := range order {
		order[n] = n
	}
	slices.SortStableFunc(order, func(a, b int) int { return want[a] - want[b] })
	caps := make([]int, len(want))
	for n, idx := range order {
		even := max(total/(len(order)-n), floor)
		caps[idx] = min(want[idx], ceiling, even)
		total -= caps[idx]
	}
	return caps
}

// request is the window followed by the round's pending messages, and
// their estimated tokens with the system prompt and tools. The slice
// shares the window's array: it is good until the next sync. Pending
// messages are prompts and notes, never a tool's result.
func (w *window) request(pending []conversation.Message) ([]conversation.Message, int) {
	out, tokens := w.msgs, w.tokens
	for _, m := range pending {
		out, tokens = append(out, m), tokens+model.EstimateMessage(m)
	}
	return out, tokens
}

// roundStart reports whether a cut may fall before msgs[i]: it starts a
// round, so no call is parted from its result and no prompt from the turn
// that answers it.
func (w *window) roundStart(i int) bool {
	return i > w.heads && w.msgs[i].Role != conversation.RoleTool && w.msgs[i-1].Role != conversation.RoleUser
}

// abs is the index in State.Messages of msgs[i].
func (w *window) abs(i int) int { return w.from + i - w.heads }

// plan finds where to cut: the earliest round start (the latest, when
// latest is set) whose tail, with the head the cut will need and the
// pending messages (extra tokens), fits in target and holds at most
// keep_turns turns. It returns the index in msgs, or -1 if no cut fits.
func (w *window) plan(st *checkpoint.State, target, extra int, latest bool) int {
	tail, turns, best := extra, 0, -1
	for i := len(w.msgs) - 1; i > w.heads; i-- {
		tail += w.costs[i]
		if w.fixed+tail > target {
			break // the tail only grows
		}
		if !w.roundStart(i) {
			continue
		}
		turns++
		if w.spec.KeepTurns > 0 && turns > w.spec.KeepTurns {
			break
		}
		if w.fixed+w.headReserve(st, w.abs(i))+tail <= target {
			best = i
			if latest {
				break
			}
		}
	}
	return best
}

// headReserve bounds the head a cut at message from will need.
func (w *window) headReserve(st *checkpoint.State, from int) int {
	n := model.Overhead + noteReserve
	if w.spec.policy() == PolicySummarize {
		n += w.spec.summaryCap()
	}
	if w.task >= 0 && w.task < from {
		n += model.EstimateMessage(st.Messages[w.task])
	}
	return n
}

// fit brings the round's request within the budget, cutting the oldest
// turns if it must, and returns its messages and how many of the model's
// turns it leaves out. A cut is journaled before the request is sent.
//
// # Errors
//
// ErrContextBudget when even the last round alone does not fit; a
// summary's failure at the model (see summarize). Either way nothing is
// cut and the conversation is intact.
func (r *run) fit(ctx context.Context, w *window, round int) ([]conversation.Message, int, error) {
	st := r.state()
	w.sync(st)
	msgs, tokens := w.request(r.pending)
	c := st.LastCompaction()
	if tokens <= w.spec.Budget && (c == nil || c.Goal <= c.From) {
		return msgs, w.earlier, nil
	}
	goal, before := 0, tokens
	if c != nil && c.Goal > c.From {
		// A cut a stop interrupted: finish it as planned, each step
		// saying what the request held before the cut, as its first did.
		goal, before = c.Goal, c.Before
	} else if goal = w.cutPoint(st, tokens-w.tokens); goal < 0 {
		return nil, 0, w.tooLarge(st, r.pending, round, w.leastTokens(st, tokens-w.tokens), "with all but its last round cut")
	}
	if err := r.cut(ctx, w, round, goal, before); err != nil {
		return nil, 0, err
	}
	if msgs, tokens = w.request(r.pending); tokens > w.spec.Budget {
		return nil, 0, w.tooLarge(st, r.pending, round, tokens, "after the cut")
	}
	return msgs, w.earlier, nil
}

// cutPoint is where a cut should end, as an index of State.Messages: the
// longest tail within half the budget if one fits there, else the
// shortest within the budget, so that the next cut is as far away as it
// can be; -1 if none fits.
func (w *window) cutPoint(st *checkpoint.State, extra int) int {
	i := w.plan(st, w.spec.Budget/2, extra, false)
	if i < 0 {
		i = w.plan(st, w.spec.Budget, extra, true)
	}
	if i < 0 {
		return -1
	}
	return w.abs(i)
}

// lastRound is the index in msgs where the last round starts, or the
// head's end if no cut may fall in the tail.
func (w *window) lastRound() int {
	i := len(w.msgs) - 1
	for i > w.heads && !w.roundStart(i) {
		i--
	}
	return max(i, w.heads)
}

// leastTokens is what the request would need with only its last round.
func (w *window) leastTokens(st *checkpoint.State, extra int) int {
	start, tail := w.lastRound(), extra
	for _, c := range w.costs[start:] {
		tail += c
	}
	return w.fixed + w.headReserve(st, w.abs(start)) + tail
}

// tooLarge is the error of a round whose request needs tokens, more than
// the budget, when it is sent as when says: what of its last round (and
// the task's prompt, sent whole wherever it lies) takes the most room, and
// what can help. A round's tool results are cut to share what is left of
// the budget, so only a round of very many takes more; what else a round
// sends is sent whole.
func (w *window) tooLarge(st *checkpoint.State, pending []conversation.Message, round, tokens int, when string) error {
	var prompt, turn, results, notes, calls int
	if w.task >= 0 && w.task < w.abs(w.lastRound()) {
		prompt += model.EstimateMessage(st.Messages[w.task])
	}
	for _, m := range append(slices.Clip(w.msgs[w.lastRound():]), pending...) {
		switch n := model.EstimateMessage(m); {
		case m.Role == conversation.RoleAssistant:
			turn += n
		case m.Role == conversation.RoleTool:
			results, calls = results+n, calls+1
		case m.Note:
			notes += n
		default:
			prompt += n
		}
	}
	why := fmt.Sprintf("cairn's notes to the model take about %d of them; raise the budget", notes)
	switch max(prompt, turn, results, notes) {
	case prompt:
		why = fmt.Sprintf("the task's prompt takes about %d of them, and it is always sent whole; raise the budget or give a shorter prompt", prompt)
	case turn:
		why = fmt.Sprintf("the model's turn takes about %d of them, and its text and calls are sent whole; raise the budget", turn)
	case results:
		why = fmt.Sprintf("its %d tool results take about %d of them, each cut as far as it goes; raise the budget", calls, results)
	}
	return fmt.Errorf("%w: round %d needs about %d tokens %s, more than context.budget %d: %s",
		ErrContextBudget, round, tokens, when, w.spec.Budget, why)
}

// cut makes the cut that ends at message goal, in as many steps as a
// summary needs, journaling each step, and rebuilds the window.
func (r *run) cut(ctx context.Context, w *window, round, goal, before int) error {
	for w.from < goal {
		st := r.state()
		c := checkpoint.Compaction{Round: round, From: goal, Policy: string(w.spec.policy()), Before: before, Goal: goal, Wording: noteWording}
		var usage *conversation.Usage
		if w.spec.policy() == PolicySummarize {
			var err error
			if c.From, c.Summary, usage, err = r.summarize(ctx, w, goal); err != nil {
				return err
			}
		}
		c.Turns = w.earlier + turnsIn(st.Messages[w.from:c.From])
		c.Pinned = -1
		if w.task >= 0 && w.task < c.From {
			c.Pinned = w.task
		}
		if c.Goal == c.From {
			c.Goal = 0
		}
		c.After = w.afterCut(st, c, r.pending)
		if err := r.log.Append(checkpoint.Record{Type: checkpoint.RecCompaction, Time: now(), Round: round, Compaction: &c, Usage: usage}); err != nil {
			return fmt.Errorf("journal the cut of the context: %w", err)
		}
		w.reset(r.state())
		r.emit(Event{Type: EventContextCompacted, Round: round, Compaction: &c, Usage: usage})
	}
	return nil
}

// afterCut is the estimated tokens of the request once c is made.
func (w *window) afterCut(st *checkpoint.State, c checkpoint.Compaction, pending []conversation.Message) int {
	n := w.fixed
	for _, m := range headOf(st, &c) {
		n += model.EstimateMessage(m)
	}
	for i := w.heads + c.From - w.from; i < len(w.msgs); i++ {
		n += w.costs[i]
	}
	_, all := w.request(pending)
	return n + all - w.tokens
}

// turnsIn counts the model's turns in msgs.
func turnsIn(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == conversation.RoleAssistant {
			n++
		}
	}
	return n
}

// headOf is the head a cut puts before the messages it keeps: the task's
// prompt if the cut left it behind, and a note that says what was cut and
// carries the summary, if any, in the wording the cut was made with.
func headOf(st *checkpoint.State, c *checkpoint.Compaction) []conversation.Message {
	var head []conversation.Message
	if c.Pinned >= 0 {
		head = append(head, st.Messages[c.Pinned])
	}
	return append(head, conversation.Message{Role: conversation.RoleUser, Text: noteOf(c), Note: true})
}

// noteOf is the text of the note a cut puts at the head of a request.
func noteOf(c *checkpoint.Compaction) string {
	drop, summary, n := dropNote, summaryNote, c.From
	if c.Pinned >= 0 && c.Wording >= 1 {
		drop, summary, n = pinnedDropNote, pinnedSummaryNote, c.From-1
	}
	if c.Summary != "" {
		return fmt.Sprintf(summary, n, c.Turns) + c.Summary
	}
	return fmt.Sprintf(drop, n, c.Turns)
}

// noteWording is the Wording of the notes a cut is made with now.
const noteWording = 1

// The notes at the head of a request past a cut: the messages and the
// model's turns it leaves out. The first wording counted a pinned task
// among them; since Wording 1 a cut that pins the task says how many
// messages besides it are left out.
const (
	dropNote          = "[cairn: the conversation's first %d messages (%d turns of the model) are left out of this request to keep it within its context budget; the agent's journal keeps them all.]"
	summaryNote       = "[cairn: the conversation's first %d messages (%d turns of the model) are left out of this request to keep it within its context budget; the agent's journal keeps them all. A summary of them:]\n\n"
	pinnedDropNote    = "[cairn: %d earlier messages, all but the task above (%d turns of the model), are left out of this request to keep it within its context budget; the journal keeps them all.]"
	pinnedSummaryNote = "[cairn: %d earlier messages, all but the task above (%d turns of the model), are left out of this request to keep it within its context budget; the journal keeps them all. A summary of them:]\n\n"
)

// noteReserve bounds the tokens of a note without its summary.
var noteReserve = max(model.EstimateTokens(fmt.Sprintf(summaryNote, 1<<40, 1<<40)),
	model.EstimateTokens(fmt.Sprintf(pinnedSummaryNote, 1<<40, 1<<40))) + model.Overhead
