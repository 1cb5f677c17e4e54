package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/fileowner"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// A call that may change the workspace runs on an overlay of its own; its
// changes are staged under the agent's staging directory and reach the
// workspace only after its result is durable in the journal:
//
//	run the round's calls, each on its own overlay
//	settle: refuse changes whose base is stale or that an earlier call of the round made
//	journal the results with their effect manifests, fdatasync
//	apply each call's effects (crash-safe, idempotent), journal "applied"
//	commit the round, remove its staging
//
// A crash before the sync applies nothing (the calls are sealed or kept
// with no effects); a crash after it is finished by resume, which applies
// what was journaled and not marked applied. So each change reaches the
// workspace exactly once.

// stagingRoot is where an agent's calls stage their changes: in its
// directory of a file store, else in a directory of the agent's own in the
// temp directory. Its parent is the agent's (see changesRoot).
func (e *Engine) stagingRoot(agent string) string { return stagingRootOf(e.store, agent) }

// stagingRootOf is stagingRoot of an agent of store: for a store without
// a directory, under the temp directory in one of this user's own
// (cairn-staging-UID), in one of the store's own, named by a digest of its
// Identity (a database and namespace) or, for a store without one (in
// memory), of the store itself, so that agents of one id in two stores run
// at once without sharing their staging.
func stagingRootOf(store checkpoint.Store, agent string) string {
	if fs, ok := store.(interface{ Dir() string }); ok {
		return filepath.Join(fs.Dir(), "agents", agent, "staging")
	}
	return filepath.Join(localRootOf(store), agent, "staging")
}

// keptDirOf is this node's directory of agent of store that keeps what
// must outlast a reboot of its own (its kept changes, under changes/, and
// the incarnationFile that says whose they are): for a store with a
// directory, or one known only in this process (in memory), the parent of
// its staging; for one named the same for every process (a PostgreSQL
// store's), in this user's state directory (stateDir), under agents/,
// named by storeDigest and the agent. Not beside its staging in the temp
// directory, where an older cairn kept them: a reboot (a tmpfs) or a
// cleaning of it lost them, and `cairn undo` with them. What an older
// cairn kept there is read, and kept beside, while the state directory
// keeps no changes of the agent; so is all where the state directory
// cannot be named (no XDG_STATE_HOME or HOME).
func keptDirOf(store checkpoint.Store, agent string) string {
	temp := filepath.Dir(stagingRootOf(store, agent))
	if _, dir := store.(interface{ Dir() string }); dir {
		return temp
	}
	if _, named := store.(interface{ Identity() string }); !named {
		return temp
	}
	state, err := stateDir()
	if err != nil {
		return temp
	}
	kept := filepath.Join(state, "agents", storeDigest(store), agent)
	if _, err := os.Lstat(filepath.Join(kept, "changes")); err != nil {
		if _, err := os.Lstat(filepath.Join(temp, "changes")); err == nil {
			return temp // an older cairn's
		}
	}
	return kept
}

// localRootOf is the directory of this machine that keeps, for a store
// without a directory, what a store with one keeps in it of this
// machine's and may be lost with the temp directory (staging, marks of
// delegations begun; not the kept changes nor the marks of fills, which
// must outlast it: see keptDirOf and fillMarksOf): in stagingBase, named
// by storeDigest.
func localRootOf(store checkpoint.Store) string {
	return filepath.Join(stagingBase(), storeDigest(store))
}

// storeDigest names store in this machine's directories: a digest of its
// Identity (a database and namespace) or, for a store without one (in
// memory), of the store itself.
func storeDigest(store checkpoint.Store) string {
	id := fmt.Sprintf("%T %p", store, store)
	if s, ok := store.(interface{ Identity() string }); ok {
		id = s.Identity()
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// stagingBase is the directory under the temp directory in which the
// agents of stores without a directory stage and keep their changes.
func stagingBase() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("cairn-staging-%d", os.Getuid()))
}

// checkStaging makes, for a store without a directory, stagingBase if
// needed, and refuses it when another user could change what is in it:
// when anyone but its owner can write it or it belongs to another user.
// Its name is known to all, so in a temp directory everyone shares
// another user may have made it first; what undo restores is read from
// it. A base that is a link is named with where it leads.
func (e *Engine) checkStaging() error { return checkStagingOf(e.store) }

// checkStagingOf is checkStaging of store.
func checkStagingOf(store checkpoint.Store) error {
	if _, ok := store.(interface{ Dir() string }); ok {
		return nil
	}
	base := stagingBase()
	dir := base
	if target, err := os.Readlink(base); err == nil {
		dir = fmt.Sprintf("%s (a link to %s)", base, target)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("staging: %s: %w", dir, err)
	}
	fi, err := os.Stat(base)
	if err != nil {
		return fmt.Errorf("staging: %w", err)
	}
	switch uid, ok := fileowner.UID(fi); {
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("staging: %s can be written by other users (mode %v), who could change the changes staged and kept in it: "+
			"remove it, or make it private with chmod 700 if it is your own, or set TMPDIR to a directory of your own", dir, fi.Mode().Perm())
	case ok && uid != os.Getuid():
		return fmt.Errorf("staging: %s belongs to another user (uid %d), who could change the changes staged and kept in it: "+
			"set TMPDIR to a directory of your own", dir, uid)
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// roundStaging is the staging directory of a round; a call's is inside it.
func (r *run) roundStaging(round int) string { return roundStagingIn(r.staging, round) }

func roundStagingIn(root string, round int) string {
	return filepath.Join(root, fmt.Sprintf("round-%d", round))
}

// callStaging is the staging directory of a call of a round, in the
// staging of the round's run.
func callStaging(roundStaging, call string) string {
	return filepath.Join(roundStaging, unsafeName.ReplaceAllString(call, "_"))
}

func (r *run) view(round int) workspaceView {
	dir := r.roundStaging(round)
	return workspaceView{dir: r.workspace, staging: func(call string) string { return callStaging(dir, call) }}
}

// settleEffects decides which changes of each call reach the workspace,
// in the order the model asked for the calls. A change whose base is no
// longer what the workspace holds (something outside the agent changed
// it), or to a path an earlier call of the round changed, is refused, and
// the call's result says which and why.
func (r *run) settleEffects(results []callResult) {
	touched := map[string]overlay.Effect{}
	owner := map[string]string{}
	for i := range results {
		res := &results[i]
		if len(res.effects) == 0 {
			continue
		}
		why := map[string]string{}
		conflicts, err := overlay.Check(r.workspace, res.effects)
		if err != nil {
			r.refuseAll(res, fmt.Sprintf("its changes could not be checked: %v", err))
			continue
		}
		for _, c := range conflicts {
			why[c.Path] = c.Reason
		}
		for _, e := range res.effects {
			if stale := r.staleBase(e); stale != "" && why[e.Path] == "" {
				why[e.Path] = stale
			}
		}
		var kept overlay.Effects
		for _, e := range res.effects {
			if prev, ok := touched[e.Path]; ok {
				if prev.Op == overlay.OpMkdir && e.Op == overlay.OpMkdir {
					continue // both made the directory: nothing to refuse
				}
				why[e.Path] = "call " + owner[e.Path] + " of this round changed it first"
			}
			if _, refused := why[e.Path]; !refused {
				kept = append(kept, e)
			}
		}
		if err := kept.Validate(); err != nil {
			r.refuseAll(res, "its other changes depend on the refused ones")
			continue
		}
		for _, e := range kept {
			touched[e.Path], owner[e.Path] = e, res.call.ID
		}
		res.changed = res.changed || len(kept) != len(res.effects) || len(why) > 0
		res.effects = kept
		if len(why) > 0 {
			res.output += conflictNote(why)
			res.isError, res.conflict = true, true
		}
	}
}

func (r *run) refuseAll(res *callResult, why string) {
	res.output += "\n\nNone of this call's changes reached the workspace: " + why + "."
	res.effects, res.isError, res.changed = nil, true, true
}

// conflictNote tells the model which changes were not applied.
func conflictNote(why map[string]string) string {
	paths := make([]string, 0, len(why))
	for p := range why {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("\n\nThese changes did not reach the workspace, because it changed under them; read the files again before retrying:")
	for _, p := range paths {
		fmt.Fprintf(&b, "\n- %s: %s", p, why[p])
	}
	return b.String()
}

// applyEffects makes the settled results durable, then applies each
// call's changes and journals that it did. The round is not committed
// here.
func (r *run) applyEffects(round int, results []callResult) error {
	var pending []callResult
	for _, res := range results {
		if res.hasChanges() {
			pending = append(pending, res)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	if err := r.log.Sync(); err != nil {
		return fmt.Errorf("round %d: journal its settled results: %w", round, err)
	}
	r.emitHeld(round, results)
	for _, res := range pending {
		if err := r.applyCall(round, res); err != nil {
			return err
		}
	}
	return nil
}

// hasChanges reports whether the call has changes to settle and apply:
// to the workspace, or a native tool's.
func (res callResult) hasChanges() bool {
	return len(res.effects) > 0 || res.native != nil && len(res.native.Effect) > 0
}

// applyCall applies a call's settled changes: to the workspace, or for a
// native tool's, by its Settle.
func (r *run) applyCall(round int, res callResult) error {
	if res.native != nil && len(res.native.Effect) > 0 {
		return r.settleNative(context.Background(), round, res)
	}
	return r.applyOne(round, res.call, res.staging, res.effects)
}

// applyOne applies one call's journaled changes and journals that it did.
func (r *run) applyOne(round int, c conversation.ToolCall, staging string, effects overlay.Effects) error {
	if err := r.beforeApply(staging, effects); err != nil {
		return fmt.Errorf("call %s: %w", c.ID, err)
	}
	r.trimmed = false
	if err := keepChanges(r.changes, round, c.ID, r.workspace, staging, effects); err != nil {
		return fmt.Errorf("keep the changes of call %s: %w", c.ID, err)
	}
	if err := overlay.Apply(r.workspace, staging, effects); err != nil {
		return fmt.Errorf("apply the changes of call %s: %w; `cairn resume %s` tries again", c.ID, err, r.agentID)
	}
	paths := make([]string, len(effects))
	for i, e := range effects {
		paths[i] = string(e.Op) + " " + e.Path
	}
	files := r.recordEffects(round, c.ID, effects)
	r.emit(Event{Type: EventEffectsApplied, Round: round, Call: &Call{ID: c.ID, Tool: c.Name}, Paths: paths})
	// The apply's record carries what it wrote, so that a resume before the
	// round's commit knows these files hold cairn's own changes.
	return r.log.Append(checkpoint.Record{Type: checkpoint.RecApplied, Time: now(), Round: round, Call: c.ID,
		Tool: c.Name, Files: files})
}

// discardStaging removes a round's staging once it is committed or
// dropped, and the changes of rounds past keepRounds: at the run's first
// and once changes were kept since, not in every round.
func (r *run) discardStaging(round int) {
	overlay.Discard(r.roundStaging(round))
	if !r.trimmed {
		trimChanges(r.changes)
		r.trimmed = true
	}
}

// encodeEffects is a result's effect manifest as the journal keeps it.
func encodeEffects(es overlay.Effects) ([]byte, error) {
	if len(es) == 0 {
		return nil, nil
	}
	return es.Marshal()
}
