package host

import (
	"errors"
	"fmt"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/filepool"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// The calls of an interrupted round that finished are kept: resume never
// runs them again, and applies each one's changes exactly once. The
// journal says how far each got:
//
//	result, unsettled       it finished; the round was never settled
//	result, settled         settling decided it (a settled result, or an
//	                        unsettled one and a "finished" phase)
//	applied                 its changes reached the workspace; the record
//	                        names the files they wrote
//
// Resume tells the file pool what the applied ones wrote (so the agent's
// own changes are never reported as made outside it), applies the settled
// ones, then settles the unsettled ones against each other and the
// workspace, as the round would have, journals that, and applies them.

// keptCall is what the journal holds of one finished call of the
// interrupted round.
type keptCall struct {
	result           checkpoint.Record // its newest result
	settled, applied bool
}

// keptCalls reads the finished calls of an interrupted round.
func keptCalls(tail []checkpoint.Record) map[string]*keptCall {
	kept := map[string]*keptCall{}
	for _, t := range tail {
		k := kept[t.Call]
		switch {
		case t.Type == checkpoint.RecResult:
			if k == nil {
				k = &keptCall{}
				kept[t.Call] = k
			}
			k.result, k.settled = t, !t.Result.Unsettled
		case k == nil:
		case t.Type == checkpoint.RecPhase && t.Phase == checkpoint.PhaseFinished:
			k.settled = true
		case t.Type == checkpoint.RecApplied:
			k.applied = true
		}
	}
	return kept
}

// finishKept settles and applies what the interrupted round's finished
// calls left unapplied, and returns those calls. A settled call whose
// changes the workspace changed under is settled again (changedUnder).
func (r *run) finishKept(rec *checkpoint.Recovered) ([]string, error) {
	round := rec.State.Round + 1
	kept := keptCalls(rec.Tail)
	r.learnApplied(round, rec.Tail, kept)
	turn, _ := tailTurn(rec.Tail)
	if turn == nil {
		return nil, nil
	}
	// Held from the check of what changed under the calls to their apply
	// (workspace_lock.go).
	defer lockWorkspace(r.workspace)()
	var settled, unsettled []callResult
	for _, c := range turn.ToolCalls {
		k, ok := kept[c.ID]
		if !ok || k.applied {
			continue
		}
		res, err := r.keptResult(round, c, k.result)
		if err != nil {
			return nil, err
		}
		switch {
		case !k.settled || r.changedUnder(res):
			unsettled = append(unsettled, res)
		case res.hasChanges():
			settled = append(settled, res)
		}
	}
	done, err := r.applyKept(round, settled)
	if err != nil || len(unsettled) == 0 {
		return done, err
	}
	r.settleEffects(unsettled)
	if err := errors.Join(r.journalSettled(round, unsettled), r.log.Sync()); err != nil {
		return done, fmt.Errorf("round %d: journal the settling of its finished calls: %w", round, err)
	}
	more, err := r.applyKept(round, unsettled)
	return append(done, more...), err
}

// changedUnder reports whether something outside the agent changed the
// workspace under a settled call's changes after they were settled and
// before they were all applied (between a stop and this resume): they
// are settled again, the changed paths refused and the model told, as
// before a settlement. Applied as they stand, they would fail, and every
// resume with them.
func (r *run) changedUnder(res callResult) bool {
	if len(res.effects) == 0 {
		return false
	}
	conflicts, err := overlay.Check(r.workspace, res.effects)
	return err == nil && len(conflicts) > 0
}

// applyKept applies the changes of settled results and makes the records
// saying so durable.
func (r *run) applyKept(round int, results []callResult) ([]string, error) {
	var done []string
	for _, res := range results {
		if len(res.effects) == 0 && (res.native == nil || len(res.native.Effect) == 0) {
			continue
		}
		if err := r.applyCall(round, res); err != nil {
			return done, err
		}
		done = append(done, res.call.ID)
	}
	if len(done) == 0 {
		return nil, nil
	}
	return done, r.log.Sync()
}

// keptResult rebuilds a call's result from its journal record.
func (r *run) keptResult(round int, c conversation.ToolCall, rec checkpoint.Record) (callResult, error) {
	res := callResult{call: c, output: rec.Result.Output, isError: rec.Result.IsError, journaled: true,
		staging: r.view(round).staging(c.ID), native: nativeOf(rec.Result)}
	if len(rec.Result.Effects) == 0 {
		return res, nil
	}
	effects, err := overlay.DecodeEffects(rec.Result.Effects)
	if err != nil {
		return res, fmt.Errorf("effects of call %s in the journal: %w", c.ID, err)
	}
	res.effects = effects
	return res, nil
}

// learnApplied tells the pool which files the interrupted round's applies
// wrote: cairn's own changes, which the checkpoint at the boundary
// predates. What changed them since is still found by Reconcile.
func (r *run) learnApplied(round int, tail []checkpoint.Record, kept map[string]*keptCall) {
	for _, t := range tail {
		if t.Type != checkpoint.RecApplied {
			continue
		}
		r.noteApplied(kept[t.Call])
		if len(t.Files) == 0 {
			r.learnFromManifest(round, t.Call, kept[t.Call])
			continue
		}
		for _, f := range t.Files {
			if got, err := r.pool.Record(poolEntry(f)); err == nil {
				r.roundFiles = append(r.roundFiles, fileEntry(got))
			}
		}
	}
}

// learnFromManifest is learnApplied for an apply journaled without the
// files it wrote: they are the New of its call's effects.
func (r *run) learnFromManifest(round int, call string, k *keptCall) {
	if k == nil || len(k.result.Result.Effects) == 0 {
		return
	}
	if effects, err := overlay.DecodeEffects(k.result.Result.Effects); err == nil {
		r.recordEffects(round, call, effects)
	}
}

// poolEntry is a journaled file entry as the pool takes it.
func poolEntry(f checkpoint.FileEntry) filepool.Entry {
	return filepool.Entry{Path: f.Path, Exists: f.Exists, Hash: filepool.Hash(f.Hash), Size: f.Size,
		Round: f.Round, Call: f.Call, Op: filepool.Op(f.Op), Outside: f.Outside}
}
