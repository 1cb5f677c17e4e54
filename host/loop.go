package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/plural"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/filepool"
	"github.com/cairnrun/cairn/host/model"
)

// run is one run of an agent in progress: the journal it commits to, the
// round being built, and everything it needs to take the next one.
type run struct {
	agentID, id string
	af          *AgentFile
	tools       *toolset
	provider    model.Provider
	modelName   string // the model's name at its provider
	priced      bool   // the model's spec has a price, so cost is counted
	scripted    bool   // the model is a script, which needs no conversation
	workspace   string
	staging     string // where the agent's calls stage their changes
	changes     string // where each round's changes are kept
	// trimmed: the kept changes are within keepRounds since changes were
	// last kept (the zero value: not known, at the run's start).
	trimmed bool
	// unmetered: a limit of tokens or cost was said to be blind, once.
	unmetered bool
	// pool tracks the files the agent wrote; watcher watches them while
	// the run lasts; roundFiles are the pool entries the round changed.
	pool       *filepool.Pool
	watcher    *filepool.Watcher
	roundFiles []checkpoint.FileEntry
	log        *heldLog
	// pending are the messages of the round being built that precede the
	// model's turn: the user's prompt, until its round commits.
	pending []conversation.Message
	// open is what the model's turn of the round not yet committed cost:
	// spent, though the boundary's usage does not have it yet.
	open      conversation.Usage
	started   int // rounds committed by this run
	startedAt time.Time
	// spent is what the interrupted round a resume found had cost (see
	// tailSpend): not in the state's usage until that round commits, but
	// part of what the tree of agents has used.
	spent conversation.Usage
	// reserved is the round beginRound let begin, in flight in the
	// run's tree until its model answers (tree_reserve.go).
	reserved *reservation
	final    string // the model's last text

	// approver asks a person about calls the approval rules put to one;
	// autoDeny denies them when no one can be asked.
	approver Approver
	autoDeny bool
	// commitCancelled commits a round whose calls the context stopped,
	// with results that say so, instead of leaving it for resume.
	commitCancelled bool
	// pauser is where Pause leaves its requests; nil when the store
	// keeps none.
	pauser checkpoint.Pauser
	// pauseLooked is when the loop last looked for a pause request.
	pauseLooked time.Time
	// callerDriven: the agent's turns come from a session's caller (see
	// callerTurns), so a resume asks no model.
	callerDriven bool
	// waiting are the ids of the calls the last round left waiting for a
	// decision.
	waiting []string
	// engine and store are what the run's native tools work with; tree,
	// what the agent's tree of sub-agents shares, root its top-level
	// agent, parentID and depth where the agent is in it (see tree.go).
	engine         *Engine
	store          checkpoint.Store
	tree           *tree
	root, parentID string
	depth          int
	// forkAlone: the agent is a fork of a sub-agent, run by itself. It
	// keeps its parent and depth (the rules above it bind its calls) but
	// its events are a top-level agent's.
	forkAlone bool
	// aboveRead: restoreAncestry found no agent file above the agent.
	aboveRead bool
	// refusedAlone, of a manual resume, is why a resume that runs the
	// agent is refused: the agent files above it are not kept.
	refusedAlone error
	// seenBlobs keeps the content of what calls read, for `cairn verify`.
	seenBlobs *blobCache
	// trimIdle lets go of what the process keeps only for speed, when
	// nothing has used it for a while (see idle).
	trimIdle func(quiet time.Duration) bool

	mu      sync.Mutex // serialises events across call goroutines
	onEvent EventFunc
	// history keeps every event in the store, for `cairn events`.
	history io.WriteCloser
	line    eventLine // an event's JSON line, its buffer reused (emit.go)
	// later, while set, takes the events emitted instead of the history
	// and onEvent, for laterEvents to emit after the one that explains
	// them (emit.go).
	later *[]Event
	// blobs keeps content in the store by digest.
	blobs func([]byte) (string, error)
	// window is what a context budget lets the model see; nil without one.
	window *window
	travel // the workspace's copy in the store (travel.go)
}

func (r *run) state() *checkpoint.State { return r.log.State() }

// emit stamps an event, adds it to the agent's history and hands it to
// the caller. The history is best effort: an event that cannot be written
// there is still delivered.
func (r *run) emit(e Event) {
	e.Time, e.Agent, e.Run, e.Parent, e.Depth = time.Now().UTC(), r.agentID, r.id, r.parentID, r.depth
	if r.forkAlone {
		e.Parent, e.Depth = "", 0
	}
	r.emitStamped(e)
}

// emitStamped is emit of an event already stamped.
func (r *run) emitStamped(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.later != nil {
		*r.later = append(*r.later, e)
		return
	}
	r.line.write(&e, r.history)
	if r.onEvent != nil {
		r.onEvent(e)
	}
}

// keepHistory makes the run add its events to the agent's history in the
// store.
func (r *run) keepHistory(store checkpoint.Store) error {
	h, err := store.Events(r.agentID)
	if err != nil {
		return err
	}
	r.history = h
	return nil
}

// nopWriter is the history of a run that keeps none.
type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriter) Close() error                { return nil }

// close releases the run's journal and history.
func (r *run) close() error { return errors.Join(r.release(), r.log.Close()) }

// release closes what the run holds besides its journal.
func (r *run) release() error {
	if r.watcher != nil {
		r.watcher.Close()
	}
	r.tools.closeNet()
	return errors.Join(r.history.Close(), r.pool.Close(), r.tools.closeServers())
}

// prompt adds the user's message to the round about to be taken.
func (r *run) prompt(text string) error {
	return r.log.Append(r.promptRecord(text))
}

// promptRecord makes text the user's message for the next request and
// returns its record, for the caller to journal.
func (r *run) promptRecord(text string) checkpoint.Record {
	msg := conversation.Message{Role: conversation.RoleUser, Text: text}
	r.pending = append(r.pending, msg)
	return checkpoint.Record{Type: checkpoint.RecUser, Time: now(), Message: &msg}
}

// loop takes rounds until the model answers without tool calls, a limit is
// reached, the context ends or Pause asks it to stop (looked for once a
// round, after the commit). It returns how the run ended and why.
func (r *run) loop(ctx context.Context) (Status, string) {
	for {
		if reason := r.beginRound(ctx); reason != "" {
			return StatusPaused, reason
		}
		more, err := r.takeRound(ctx)
		if err == nil && !more {
			// The answer's round committed: the task is done even if the
			// context ended meanwhile.
			return StatusDone, ""
		}
		if status, reason, ok := stopped(ctx, err); ok {
			return status, reason
		}
		if r.pauseDue() && r.pauseRequested() {
			return StatusPaused, pausedOnRequest
		}
	}
}

// stopped says whether a round's error (or the context's end) stops the
// run, and how.
func stopped(ctx context.Context, err error) (Status, string, bool) {
	var awaiting *awaitingError
	var stop *stopError
	switch {
	case ctx.Err() != nil:
		return StatusPaused, "interrupted: " + context.Cause(ctx).Error(), true
	case errors.As(err, &stop):
		return stop.Status, stop.Reason, true
	case errors.As(err, &awaiting):
		return StatusAwaitingApproval, awaiting.Error(), true
	case errors.Is(err, model.ErrUnavailable):
		return StatusPaused, err.Error(), true // it says "model unavailable"
	case unwritable(err) != "":
		// The round did not commit; the last one stands, and a resume
		// goes on from it once the store can be written.
		return StatusPaused, err.Error() + "; " + unwritable(err), true
	case err != nil:
		return StatusFailed, err.Error(), true
	}
	return "", "", false
}

// limitReached says which of the run's limits stops it before another
// round, and how to go on. Rounds count since the last prompt, across
// resumes; tokens and cost over the agent's life; time from the start of
// this run, which commits one round whatever its max_time, so that a
// max_time shorter than starting takes (on a slow or busy machine) does
// not leave the agent unable to go on.
func (r *run) limitReached() string {
	return r.limitReachedTimed(r.started > 0)
}

// limitReachedTimed is limitReached with max_time counting (the run's own,
// and its tree's) as if the run had committed a round, or not (started).
func (r *run) limitReachedTimed(started bool) string {
	l, st := r.af.Limits, r.state()
	var reason, flag string
	switch {
	case st.TaskRounds >= l.maxRounds() && len(r.pending) == 0:
		reason, flag = "reached max_rounds ("+plural.Count(st.TaskRounds, "round")+" since the prompt)", "--max-rounds"
	case l.MaxTokens > 0 && st.Usage.Total() >= l.MaxTokens:
		reason, flag = fmt.Sprintf("reached max_tokens (%d used of %d)", st.Usage.Total(), l.MaxTokens), "--max-tokens"
	case l.MaxCost > 0 && float64(st.Usage.CostMicroUSD) >= l.MaxCost*1e6:
		reason, flag = fmt.Sprintf("reached max_cost ($%.4f spent of $%.4f)", float64(st.Usage.CostMicroUSD)/1e6, l.MaxCost), "--max-cost"
	case l.MaxTime > 0 && started && time.Since(r.startedAt) >= time.Duration(l.MaxTime):
		reason, flag = fmt.Sprintf("reached max_time (%s in this run)", time.Duration(l.MaxTime)), "--max-time"
	default:
		return r.treeLimitReached(started)
	}
	return reason + "; resume with " + flag + " to allow more"
}

// limitPrefix begins the reason of a run that its own limit stopped.
const limitPrefix = "reached "

// takeRound asks the model for a turn, runs the calls it asks for,
// journals each step and commits the round. It reports whether the model
// asked for calls, and so whether another round follows.
func (r *run) takeRound(ctx context.Context) (bool, error) {
	defer r.endReservation() // a round whose model did not answer
	round := r.state().Round + 1
	r.warnOfModules()
	if err := r.drainOutsideChanges(ctx); err != nil {
		return false, err
	}
	msgs, earlier, err := r.conversation(ctx, round)
	if err != nil {
		return false, err
	}
	mctx, done := r.modelContext(ctx)
	resp, err := r.provider.Complete(mctx, r.request(round, msgs, earlier))
	done()
	if stop := r.modelStopped(mctx); stop != nil && err != nil && ctx.Err() == nil {
		return false, stop
	}
	if errors.Is(err, model.ErrUnavailable) {
		return false, err // it names the model already
	}
	if err != nil {
		return false, fmt.Errorf("model: %w", err)
	}
	turn := resp.Message
	turn.Role = conversation.RoleAssistant
	turn.ToolCalls = distinctCallIDs(turn.ToolCalls)
	usage := resp.Usage
	r.open = usage
	r.turnAnswered(&usage)
	r.warnIfUnmetered(usage)
	r.warnOfStop(resp.StopReason, len(turn.ToolCalls))
	// Written with its calls' executing records, or its commit.
	r.log.hold(checkpoint.Record{Type: checkpoint.RecTurn, Time: now(), Round: round, Message: &turn, Usage: &usage})
	if len(turn.ToolCalls) > 0 {
		// model_turn reaches the history with the first tool_start, in
		// one write (or with approval_required, or at the round's end).
		r.holdEvents()
	}
	r.emit(Event{Type: EventModelTurn, Round: round, Calls: len(turn.ToolCalls), Usage: &usage})
	if turn.Text != "" {
		r.final = turn.Text
	}
	err = r.finishRound(ctx, round, turn.ToolCalls, nil)
	r.releaseEvents()
	if err != nil {
		return false, err
	}
	return len(turn.ToolCalls) > 0, nil
}

// settleAndApply decides which of the round's changes reach the
// workspace, journals that, and applies them, holding the workspace
// against the other runs that share it (workspace_lock.go).
func (r *run) settleAndApply(ctx context.Context, round int, results []callResult) error {
	defer r.holdWorkspace(results)()
	r.settleEffects(results)
	r.recordReads(ctx, round, results)
	if err := r.journalSettled(round, results); err != nil {
		return err
	}
	return r.applyEffects(round, results)
}

// finishRound takes calls of a round through approval and execution,
// settles and journals their results and commits the round, unless a call
// still waits for a person: then the round stays open and an
// *awaitingError says so. Each call's result is durable the moment the
// call finishes (see durable.go); if the context ends meanwhile, the
// results of the calls that finished are kept in the journal for resume.
func (r *run) finishRound(ctx context.Context, round int, calls []conversation.ToolCall,
	last map[string]checkpoint.Record) error {
	results, waiting, err := r.playCalls(ctx, round, calls, last)
	if err != nil {
		return err
	}
	if ctx.Err() != nil && !r.commitCancelled {
		if err := r.keepHeld(round, results); err != nil {
			return err
		}
		return ctx.Err()
	}
	if stop := stopOf(results); stop != nil {
		return errors.Join(r.keepHeld(round, results), stop)
	}
	inCallOrder(results, calls)
	if err := r.settleAndApply(ctx, round, results); err != nil {
		return err
	}
	if len(waiting) > 0 {
		if err := r.log.Sync(); err != nil {
			return err
		}
		r.emitHeld(round, results)
		r.waiting = nil
		for _, c := range waiting {
			r.waiting = append(r.waiting, c.ID)
		}
		return &awaitingError{calls: waiting}
	}
	if err := r.commit(round, results); err != nil {
		return err
	}
	r.discardCommitted(round, calls, last != nil)
	return nil
}

// keepHeld journals, unsettled and durably, the results of calls that
// finished but were held for a settlement that the context's end
// prevents, so that resume keeps them; and, of each call that a stop
// ended in flight (max_time), what ended it, so that resume's seal of it
// says so (checkpoint.Record.Stopped).
func (r *run) keepHeld(round int, results []callResult) error {
	var recs []checkpoint.Record
	for _, res := range results {
		switch {
		case res.held:
			rec, err := resultRecord(round, res, true)
			if err != nil {
				return err
			}
			recs = append(recs, rec)
		case res.interrupted && res.stop != nil && res.stop.Stopped != "":
			rec := phaseRecord(round, res.call, checkpoint.PhaseExecuting, "")
			rec.Stopped = res.stop.Stopped
			recs = append(recs, rec)
		}
	}
	if len(recs) > 0 {
		if err := appendDurably(r.log, recs...); err != nil {
			return fmt.Errorf("journal the results of finished calls and what stopped those in flight: %w", err)
		}
	}
	// Every call that finished ends in the history, the ones journaled
	// as they finished, whose changes wait for settlement, too: resume
	// keeps them all. A call with changes ends unsettled: resume may yet
	// refuse them.
	for i := range results {
		results[i].unsettled = (results[i].held || results[i].endLater) && len(results[i].effects) > 0
	}
	r.emitHeld(round, results)
	return nil
}

// inCallOrder sorts results into the order the model asked for the calls.
func inCallOrder(results []callResult, calls []conversation.ToolCall) {
	index := map[string]int{}
	for i, c := range calls {
		index[c.ID] = i
	}
	sort.SliceStable(results, func(i, j int) bool { return index[results[i].call.ID] < index[results[j].call.ID] })
}

// runCalls runs a turn's calls: each is journaled as executing, durably
// (see startCalls), before any runs, and each one's result is durable as
// it finishes. asked says a call of the turn needs a person. The calls
// that max_time ends are left in flight, each result with a stopError
// (see stopInFlight).
func (r *run) runCalls(ctx context.Context, round int, calls []conversation.ToolCall, asked bool) ([]callResult, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	if err := r.startCalls(round, calls, asked); err != nil {
		return nil, err
	}
	// max_time ends the calls in flight (callsContext), but a delegation:
	// its child keeps to its tree's max_time itself, and stops at its own
	// boundary, which its resume goes on from.
	cctx, done := r.callsContext(ctx)
	defer done()
	ctxOf := func(c conversation.ToolCall) context.Context {
		if r.tools.resumesInFlight(c.Name) {
			return ctx
		}
		return cctx
	}
	g := newRoundSync(r.log)
	var left atomic.Int32
	left.Store(int32(len(calls)))
	var mu sync.Mutex
	var journalErr error
	view := r.view(round)
	view.net = r.netFor(round, g)
	results := r.tools.runCalls(ctxOf, view, calls,
		func(c conversation.ToolCall) {
			r.emit(Event{Type: EventToolStart, Round: round, Call: &Call{ID: c.ID, Tool: c.Name, Input: c.Input,
				Unsandboxed: r.tools.unsandboxed(c.Name)}})
			r.releaseEvents()
		},
		func(res *callResult) {
			if err := r.callFinished(ctxOf(res.call), round, res, g, &left); err != nil {
				// The first failure fails the round; the calls after it
				// meet the same failure of the journal, told once.
				mu.Lock()
				if journalErr == nil {
					journalErr = err
				}
				mu.Unlock()
			}
		})
	r.stopInFlight(ctx, cctx, results)
	return results, journalErr
}

// journalSettled records what settling the round decided for each call:
// for one journaled as it finished and left as it was, that it stands
// (a finished phase); for any other, its result. They are written at
// once, not held for the commit: a call held for settlement has finished,
// and a kill from now on must find its result. Nothing is synced here.
func (r *run) journalSettled(round int, results []callResult) error {
	if len(results) == 0 {
		return nil
	}
	recs := make([]checkpoint.Record, 0, len(results))
	for _, res := range results {
		if res.journaled && !res.changed {
			recs = append(recs, phaseRecord(round, res.call, checkpoint.PhaseFinished, ""))
			continue
		}
		rec, err := resultRecord(round, res, false)
		if err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	return r.log.Append(recs...)
}

// commit makes the round the new boundary: one write and one fdatasync,
// which also make durable the results held for it.
func (r *run) commit(round int, results []callResult) error {
	r.log.hold(filesRecords(round, r.roundFiles)...)
	r.roundFiles = nil
	n, err := r.log.Commit(checkpoint.Record{Type: checkpoint.RecCommit, Time: now(), Round: round})
	if err != nil {
		return fmt.Errorf("commit round %d: %w", round, err)
	}
	if err := r.keepPast(); err != nil {
		return err
	}
	r.holdEvents()
	defer r.releaseEvents()
	r.emitHeld(round, results)
	r.committed(round, results)
	r.pending = nil
	r.open = conversation.Usage{}
	r.started++
	u := r.state().Usage
	r.emit(Event{Type: EventCheckpointSaved, Round: round, Bytes: n})
	r.emit(Event{Type: EventRoundEnd, Round: round, Usage: &u})
	return nil
}

// filesRecordBytes bounds the bytes of one RecFiles record: each call of
// a round may read and describe up to 100,000 paths of 16 MiB of names
// (overlay's bound on what a call saw), so the files of a round of a few
// such calls are more than one journal frame holds (64 MiB), and the round
// could never commit.
var filesRecordBytes = 8 << 20

// fileEntryBytes is about what a file entry takes in a record besides its
// path and call: the hash, the size, the round and the keys.
const fileEntryBytes = 64

// filesRecords are the RecFiles records of a round's pool entries: as
// many as keep each within filesRecordBytes, in order (replay merges them
// in turn), none when there are none.
func filesRecords(round int, files []checkpoint.FileEntry) []checkpoint.Record {
	var recs []checkpoint.Record
	add := func(part []checkpoint.FileEntry) {
		recs = append(recs, checkpoint.Record{Type: checkpoint.RecFiles, Time: now(), Round: round, Files: part})
	}
	start, size := 0, 0
	for i, f := range files {
		n := len(f.Path) + len(f.Call) + fileEntryBytes
		if i > start && size+n > filesRecordBytes {
			add(files[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(files) {
		add(files[start:])
	}
	return recs
}

// warnOfModules warns of every tool module found, since the last time,
// not to compile.
func (r *run) warnOfModules() {
	for _, w := range r.tools.newWarnings() {
		r.emit(Event{Type: EventWarning, Text: w})
	}
}

// end journals how the run ended and returns its result.
func (r *run) end(status Status, reason string) (*Result, error) {
	rec := checkpoint.Record{Type: checkpoint.RecRunEnded, Time: now(),
		Run: &checkpoint.RunInfo{ID: r.id, Status: checkpoint.Status(status), Reason: reason}}
	err := appendDurably(r.log, rec)
	st := r.state()
	r.warnOfModules()
	// A round left open (awaiting a person, stopped) spent its turn too.
	res := &Result{Agent: r.agentID, Run: r.id, Status: status, Reason: reason, Rounds: st.Round,
		Usage: st.Usage.Add(r.open), ToolCalls: st.ToolCalls, Text: r.final}
	if status == StatusAwaitingApproval {
		res.Awaiting = r.waiting
	}
	r.emit(Event{Type: EventRunEnd, Status: status, Reason: reason, Round: st.Round, Usage: &res.Usage})
	if err != nil {
		return res, endNotRecorded(r.agentID, r.id, status, reason, err)
	}
	return res, nil
}

// event describes a finished call for a tool_end event.
func (res callResult) event() *Call {
	outcome := OutcomeOK
	switch {
	case res.unsettled:
		outcome = OutcomeUnsettled
	case res.conflict:
		outcome = OutcomeConflict
	case res.isError:
		outcome = OutcomeError
	}
	return &Call{ID: res.call.ID, Tool: res.call.Name, Outcome: outcome, Output: res.output,
		DurationMS: float64(res.duration.Microseconds()) / 1000, Stderr: res.stderr, Net: netUsage(res.net)}
}

func now() time.Time { return time.Now().UTC() }

// distinctCallIDs gives each call of a turn an id no other call of it
// has: a call whose id an earlier call of the turn took gets it with
// "_2", "_3", … added. The journal, the results and the next request know
// a call by its id, so a model that sent one id twice would otherwise
// have one call's result stand for both.
func distinctCallIDs(calls []conversation.ToolCall) []conversation.ToolCall {
	if len(calls) < 2 {
		return calls
	}
	seen := make(map[string]bool, len(calls))
	var out []conversation.ToolCall
	for i, c := range calls {
		if !seen[c.ID] {
			seen[c.ID] = true
			continue
		}
		if out == nil {
			out = slices.Clone(calls)
		}
		for n := 2; ; n++ {
			if id := c.ID + "_" + strconv.Itoa(n); !seen[id] {
				out[i].ID, seen[id] = id, true
				break
			}
		}
	}
	if out == nil {
		return calls
	}
	return out
}

// warnIfUnmetered says, once a run, that a limit of tokens or cost cannot
// stop it: max_cost without the model's price, which counts no cost, or
// max_tokens or max_cost with a model server that reports no usage.
//
// A sub-agent's run is bound by its tree's limits too: its model's turns
// count toward the tree's max_cost only when priced.
func (r *run) warnIfUnmetered(u conversation.Usage) {
	l := r.af.Limits
	if w := r.tree.widest(); r.tree != nil {
		l.MaxTokens = max(l.MaxTokens, w.MaxTokens)
		l.MaxCost = max(l.MaxCost, w.MaxCost)
	}
	var why string
	switch {
	case r.unmetered:
		return
	case l.MaxCost > 0 && !r.priced && r.af.Limits.MaxCost == 0:
		why = "its tree's max_cost is set but this sub-agent's model has no price (model: {price: {input: …, output: …}}, dollars per million tokens), so its turns cost nothing toward max_cost"
	case l.MaxCost > 0 && !r.priced:
		why = "max_cost is set but the model has no price (model: {price: {input: …, output: …}}, dollars per million tokens), so no cost is counted and max_cost will not stop the run"
	case (l.MaxTokens > 0 || l.MaxCost > 0) && u.Total() == 0:
		why = "the model server reported no token usage, so max_tokens and max_cost cannot count this run's turns and will not stop it"
	default:
		return
	}
	r.unmetered = true
	r.emit(Event{Type: EventWarning, Text: why})
}

// warnOfStop says when the model's turn ended otherwise than by its own
// choice: cut off at its output limit, or refused.
func (r *run) warnOfStop(reason string, calls int) {
	switch {
	case reason == model.StopLength && calls > 0:
		r.emit(Event{Type: EventWarning, Text: "the model's turn was cut off at its output limit (max_tokens): a call whose arguments were cut short fails as not valid JSON; raise the model's max_tokens if this repeats"})
	case reason == model.StopLength:
		r.emit(Event{Type: EventWarning, Text: "the model's answer was cut off at its output limit (max_tokens): it may end mid-sentence; raise the model's max_tokens, or ask it to go on"})
	case reason == model.StopRefusal:
		r.emit(Event{Type: EventWarning, Text: "the model refused: its answer is its refusal"})
	}
}
