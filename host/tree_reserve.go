package host

import (
	"context"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Rounds in flight. An agent's round spends tokens (and cost) that no
// one knows before its model answers, and the agents of a tree run side
// by side: had each begun a round whenever the tree's budget was not yet
// spent, the rounds begun together would all go on, and the tree would
// pass its budget by as many rounds as run at once. So a round of an
// agent whose tree has max_tokens or max_cost begins (reserve) only when,
// in its tree and each tree above it, the budget is not spent and either
// no other round is in flight, or the budget has room for this round and
// every round in flight, each counted as the largest round an agent of
// that tree has taken in this process (est). Otherwise it waits for a
// round in flight to be answered. Its model's turn counts toward the
// budget as it is answered (turnAnswered), not when its round commits.
//
// So the rounds begun while the budget had room end within it if none
// uses more than the largest before it; past that, only a round begun
// with no other in flight, and the tree passes its budget by at most that
// one round, plus what rounds in flight beside it used beyond est.

// reservation is a round that reserve let begin; nil for one of a run
// whose tree sets no budget.
type reservation struct{ trees []*tree }

// budgeted reports whether t bounds tokens or cost.
func (t *tree) budgeted() bool { return t.limits.MaxTokens > 0 || t.limits.MaxCost > 0 }

// outermost is the tree at the end of t's ups, whose lock and wake are those of
// every reservation of the trees below it.
func (t *tree) outermost() *tree {
	for t.up != nil {
		t = t.up
	}
	return t
}

// room says whether a round may begin in t: its budget not spent, and no
// round in flight, or room for the round and those in flight at est each;
// spent says the budget is spent. The caller holds top's reserveMu.
func (t *tree) room() (ok, spent bool) {
	u := t.total()
	t.mu.Lock()
	tokens, cost := t.estTokens, t.estCost
	t.mu.Unlock()
	l, n := t.limits, int64(t.flying+1)
	switch {
	case l.MaxTokens > 0 && u.Total() >= l.MaxTokens, l.MaxCost > 0 && float64(u.CostMicroUSD) >= l.MaxCost*1e6:
		return false, true
	case t.flying == 0:
		return true, false
	case l.MaxTokens > 0 && u.Total()+n*tokens > l.MaxTokens:
		return false, false
	case l.MaxCost > 0 && float64(u.CostMicroUSD+n*cost) > l.MaxCost*1e6:
		return false, false
	}
	return true, false
}

// reserve lets a round of an agent of t begin, as the budgets of t and
// the trees above it allow (see room), counting it in flight in each that
// has one. It returns nil when none does. ok is false when a round may not
// begin now; wake is then closed when one in flight is answered, unless
// spent says a budget is spent, and nothing in flight can change that.
func (t *tree) reserve() (res *reservation, ok, spent bool, wake <-chan struct{}) {
	top := t.outermost()
	top.reserveMu.Lock()
	defer top.reserveMu.Unlock()
	var trees []*tree
	for u := t; u != nil; u = u.up {
		if !u.budgeted() {
			continue
		}
		if ok, spent := u.room(); !ok {
			if top.wake == nil {
				top.wake = make(chan struct{})
			}
			return nil, false, spent, top.wake
		}
		trees = append(trees, u)
	}
	if len(trees) == 0 {
		return nil, true, false, nil
	}
	for _, u := range trees {
		u.flying++
	}
	return &reservation{trees: trees}, true, false, nil
}

// release ends the reservation, its round answered (or failed), and wakes
// the rounds that wait for room. Safe on nil.
func (res *reservation) release() {
	if res == nil {
		return
	}
	top := res.trees[0].outermost()
	top.reserveMu.Lock()
	defer top.reserveMu.Unlock()
	for _, u := range res.trees {
		u.flying--
	}
	if top.wake != nil {
		close(top.wake)
		top.wake = nil
	}
}

// beginRound waits until the run may take a round: it returns the reason
// that stops it instead (a limit reached, see limitReached, or the
// context's end). The round it lets begin is counted in flight in the
// run's tree until its model answers (see turnAnswered).
func (r *run) beginRound(ctx context.Context) string {
	for {
		if reason := r.limitReached(); reason != "" {
			return reason
		}
		if r.tree == nil {
			return ""
		}
		res, ok, spent, wake := r.tree.reserve()
		if ok {
			r.reserved = res
			return ""
		}
		if spent {
			// A budget of the tree is spent: limitReached names it, or,
			// for the top-level agent, whose own limits count its
			// state's usage alone, the tree does.
			if reason := r.limitReached(); reason != "" {
				return reason
			}
			if reason := r.tree.limitReached(r.rootID(), r.started > 0); reason != "" {
				return reason
			}
			return "the budget of the tree of " + r.rootID() + " is spent; resume it with --max-tokens or --max-cost to allow more"
		}
		// Looked at again after watchEvery too: max_time, or a pause,
		// may stop the run while it waits.
		t := time.NewTimer(watchEvery)
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return "interrupted: " + context.Cause(ctx).Error()
		}
		t.Stop()
		if r.pauseDue() && r.pauseRequested() {
			return pausedOnRequest
		}
	}
}

// turnAnswered counts the model's turn of the round, usage, toward the
// budgets of the run's tree as it is answered, makes it the largest round
// of each tree if it is, and ends the round's reservation.
func (r *run) turnAnswered(usage *conversation.Usage) {
	defer r.endReservation()
	if r.tree == nil || usage == nil {
		return
	}
	r.tree.report(r.agentID, r.state().Usage.Add(r.spent).Add(*usage), nil)
	r.tree.largest(*usage)
}

// largest makes a round that used u the largest of t and the trees above
// it, if it is.
func (t *tree) largest(u conversation.Usage) {
	for ; t != nil; t = t.up {
		t.mu.Lock()
		t.estTokens, t.estCost = max(t.estTokens, u.Total()), max(t.estCost, u.CostMicroUSD)
		t.mu.Unlock()
	}
}

// endReservation ends the round's reservation, if it has one.
func (r *run) endReservation() {
	r.reserved.release()
	r.reserved = nil
}
