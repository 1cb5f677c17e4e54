package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/syncpoint"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// How a round's calls become durable (RATIONALE.md, "Durability"):
//
//	make the staging directories of the calls that may write; sync them
//	journal each call's "executing" phase; fdatasync — before any tool runs,
//	    unless every call of the turn is effect-free (effectfree.go) and
//	    none needs a person
//	as each call finishes: fdatasync its staged files and staging directory,
//	    journal its result (unsettled); fdatasync — calls finishing while
//	    another's sync runs share the next one; only then its tool_end
//	settle the round; journal what settling decided; apply; commit
//
// So a call that started is journaled as executing even after a power
// cut (its seal is never a second run in disguise), and a call that
// finished is kept by resume, never run again, whatever stopped the
// process. The last call of a round to finish is journaled with the
// round's settlement, which follows it at once, so a round of one call
// costs no sync more than it must.

// roundSync appends the records of a round's calls from their goroutines
// and makes them durable. While one batch is written and synced, the
// records of calls that finish meanwhile queue for the next batch, so
// calls finishing together share one fdatasync.
type roundSync struct {
	log  checkpoint.Log
	mu   sync.Mutex
	cond sync.Cond
	// queue is batch next, which is being queued; done is the last batch
	// written; busy says a batch is being written.
	queue      []checkpoint.Record
	next, done uint64
	busy       bool
	err        error // the first batch's failure, after which nothing is written
}

func newRoundSync(log checkpoint.Log) *roundSync {
	g := &roundSync{log: log, next: 1}
	g.cond.L = &g.mu
	return g
}

// write appends recs and returns once they are durable. It is safe for
// concurrent use; nothing else may use the log meanwhile. Once a batch
// has failed, nothing more is written: every write returns its error.
func (g *roundSync) write(recs ...checkpoint.Record) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.queue = append(g.queue, recs...)
	batch := g.next
	for g.busy && g.done < batch {
		g.cond.Wait()
	}
	if g.done >= batch || g.err != nil {
		return g.err
	}
	todo := g.queue
	g.queue, g.next, g.busy = nil, g.next+1, true
	g.mu.Unlock()
	err := appendDurably(g.log, todo...)
	g.mu.Lock()
	g.busy, g.done = false, batch
	if g.err == nil && err != nil {
		g.err = fmt.Errorf("journal the results of finished calls: %w", err)
	}
	g.cond.Broadcast()
	return g.err
}

// appendDurably appends recs and makes them durable. An append that
// failed is not synced: the sync would fail again, of the same cause, and
// the one cause (a lost lock, say) would be told twice.
func appendDurably(log checkpoint.Log, recs ...checkpoint.Record) error {
	if err := log.Append(recs...); err != nil {
		return err
	}
	return log.Sync()
}

// startCalls makes the staging directories of the calls that may write
// and journals every call as executing before any of them runs: durably,
// unless every call of the turn is effect-free and none needs a person
// (a turn with such a call is durable already, with its approval_required
// record, and so are its executing records and every decision before any
// call runs). Unsynced, the records reach the page cache before the calls
// run, so a killed process leaves them for resume, and the next sync (a
// result's, or the commit's) makes them durable; a power cut before it
// loses the round from its turn on, and resume runs it again, which for
// calls that changed nothing is exactly right.
func (r *run) startCalls(round int, calls []conversation.ToolCall, asked bool) error {
	if err := r.makeStaging(round, calls); err != nil {
		return fmt.Errorf("round %d: make its staging: %w", round, err)
	}
	recs := make([]checkpoint.Record, len(calls))
	for i, c := range calls {
		recs[i] = phaseRecord(round, c, checkpoint.PhaseExecuting, "")
	}
	err := r.log.Append(recs...)
	if err == nil && (asked || !r.tools.effectFreeTurn(calls)) {
		err = r.log.Sync()
	}
	if err != nil {
		return fmt.Errorf("round %d: journal its calls as executing: %w", round, err)
	}
	return nil
}

// makeStaging makes the staging directory of each call whose tool may
// write, and syncs the directories that name them, so that the staged
// files a result refers to are reachable after a power cut.
func (r *run) makeStaging(round int, calls []conversation.ToolCall) error {
	if !slices.ContainsFunc(calls, func(c conversation.ToolCall) bool { return r.tools.stages(c.Name) }) {
		return nil
	}
	view := r.view(round)
	_, err := os.Stat(r.staging)
	fresh := errors.Is(err, os.ErrNotExist)
	for _, c := range calls {
		if !r.tools.stages(c.Name) {
			continue
		}
		if err := os.MkdirAll(view.staging(c.ID), 0o700); err != nil {
			return err
		}
	}
	dirs := []string{r.roundStaging(round), r.staging}
	if fresh {
		dirs = append(dirs, filepath.Dir(r.staging))
	}
	return syncDirs(dirs...)
}

// discardCommitted discards a committed round's staging, unless none of
// its calls could have made any: no call stages, and the round was not
// begun by an earlier run (which may have offered tools that did). A
// round of reads then costs no system call here.
func (r *run) discardCommitted(round int, calls []conversation.ToolCall, resumed bool) {
	if resumed || slices.ContainsFunc(calls, func(c conversation.ToolCall) bool { return r.tools.stages(c.Name) }) {
		r.discardStaging(round)
		return
	}
	if !r.trimmed {
		trimChanges(r.changes)
		r.trimmed = true
	}
}

// syncDirs syncs each directory, naming the one that fails.
func syncDirs(dirs ...string) error {
	for _, d := range dirs {
		if err := syncpoint.SyncFile(d); err != nil {
			return fmt.Errorf("sync directory %s: %w", d, err)
		}
	}
	return nil
}

// callFinished makes a finished call's result durable: its staged files,
// then its result, unsettled. The last call of the round to finish is
// only held: the round's settlement journals it at once. An interrupted
// call is neither: resume seals it.
func (r *run) callFinished(ctx context.Context, round int, res *callResult, g *roundSync, left *atomic.Int32) error {
	last := left.Add(-1) == 0
	if (ctx.Err() != nil && res.isError) || res.stop != nil {
		res.interrupted = true
		return nil
	}
	if res.staging != "" && len(res.effects) > 0 {
		if err := overlay.SyncStaged(res.staging, res.effects); err != nil {
			return fmt.Errorf("call %s: %w", res.call.ID, err)
		}
		if err := r.keepStagedFiles(res.staging, res.effects); err != nil {
			return fmt.Errorf("call %s: %w", res.call.ID, err)
		}
	}
	if err := r.recordCall(round, res); err != nil {
		return err
	}
	if last {
		res.held = true
		return nil
	}
	rec, err := resultRecord(round, *res, true)
	if err != nil {
		return err
	}
	if err := g.write(rec); err != nil {
		return err // its result is not journaled, nor its end told
	}
	res.journaled = true
	if len(res.effects) > 0 {
		res.endLater = true // settling may yet refuse its changes
		return nil
	}
	r.emit(Event{Type: EventToolEnd, Round: round, Call: res.event()})
	return nil
}

// resultRecord is the journal record of a call's result; unsettled for
// one journaled as the call finished.
func resultRecord(round int, res callResult, unsettled bool) (checkpoint.Record, error) {
	effects, err := encodeEffects(res.effects)
	if err != nil {
		return checkpoint.Record{}, fmt.Errorf("encode the changes of call %s: %w", res.call.ID, err)
	}
	result := &checkpoint.Result{Output: res.output, IsError: res.isError,
		DurationMS: float64(res.duration.Microseconds()) / 1000, Effects: effects, Unsettled: unsettled,
		Recording: res.recording, Net: res.net}
	if n := res.native; n != nil {
		result.Todos, result.Usage, result.Native = n.Todos, n.Usage, n.Effect
	}
	return checkpoint.Record{Type: checkpoint.RecResult, Time: now(), Round: round, Call: res.call.ID,
		Tool: res.call.Name, Result: result}, nil
}

// emitHeld emits the tool_end of the calls whose results became durable
// with the round's settlement, once they are, of the calls whose changes
// the settlement decided, and, in a run that commits what its context
// stopped (a session), of the calls it stopped.
func (r *run) emitHeld(round int, results []callResult) {
	for i := range results {
		if results[i].held || results[i].endLater || results[i].interrupted && r.commitCancelled {
			results[i].held, results[i].endLater = false, false
			r.emit(Event{Type: EventToolEnd, Round: round, Call: results[i].event()})
		}
	}
}
