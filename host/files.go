package host

import (
	"context"
	"fmt"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/filepool"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// The file pool tracks what the agent's calls read and wrote (and so what
// the agent believes the workspace holds). It is kept in the loop state, fed
// by every applied change, watched while the agent runs, and re-hashed
// when it comes back: changes made outside the agent are told to the model
// in a note before its next turn, and a call's change to a file that
// changed since the agent last saw it is refused as a conflict.

// openPool builds the run's file pool from the agent's state.
func openPool(workspace string, st *checkpoint.State) (*filepool.Pool, error) {
	entries := make([]filepool.Entry, len(st.Files))
	for i, f := range st.Files {
		entries[i] = poolEntry(f)
	}
	p, err := filepool.New(workspace, filepool.State{Entries: entries}, filepool.Config{MaxEntries: checkpoint.MaxFileEntries})
	if err != nil {
		return nil, fmt.Errorf("file pool: %w", err)
	}
	return p, nil
}

func fileEntry(e filepool.Entry) checkpoint.FileEntry {
	return checkpoint.FileEntry{Path: e.Path, Exists: e.Exists, Hash: [32]byte(e.Hash), Size: e.Size,
		Round: e.Round, Call: e.Call, Op: string(e.Op), Outside: e.Outside}
}

// recordEffects tells the pool what a call's applied changes left, keeps
// the entries for the round's RecFiles record and returns them.
func (r *run) recordEffects(round int, call string, effects overlay.Effects) []checkpoint.FileEntry {
	var out []checkpoint.FileEntry
	for _, e := range effects {
		if e.New.Dir || e.Base.Dir {
			continue
		}
		op := filepool.OpWrite
		if !e.New.Exists {
			op = filepool.OpDelete
		}
		got, err := r.pool.Record(filepool.Entry{Path: e.Path, Exists: e.New.Exists, Hash: filepool.Hash(e.New.Hash),
			Size: e.New.Size, Round: round, Call: call, Op: op})
		if err == nil {
			r.roundFiles = append(r.roundFiles, fileEntry(got))
			out = append(out, fileEntry(got))
		}
	}
	return out
}

// staleBase says why a change must not be applied because the file changed
// since the agent last saw it, or "".
func (r *run) staleBase(e overlay.Effect) string {
	if e.Base.Dir || e.New.Dir {
		return ""
	}
	seen, ok := r.pool.Lookup(e.Path)
	if !ok || (seen.Exists == e.Base.Exists && (!seen.Exists || [32]byte(seen.Hash) == e.Base.Hash)) {
		return ""
	}
	return fmt.Sprintf("it changed outside the agent since round %d, when the agent last saw it", seen.Round)
}

// noteOutsideChanges tells the model, before its next turn, which files
// changed outside the agent, and records that it was told: the note and
// the files as the model was told of them go in one write, so that a
// resume that keeps the round knows them, and does not tell them again
// (see learnTold).
func (r *run) noteOutsideChanges(ctx context.Context, changes []filepool.Change, while string) error {
	if len(changes) == 0 {
		return nil
	}
	r.pool.Accept(changes)
	r.outside = true
	var told []checkpoint.FileEntry
	for _, c := range changes {
		if e, ok := r.pool.Lookup(c.Path); ok {
			told = append(told, fileEntry(e))
		}
	}
	text := "Files changed outside the agent " + while + ":\n" + filepool.Summary(changes)
	r.emit(Event{Type: EventFilesChanged, Text: text})
	msg := conversation.Message{Role: conversation.RoleUser, Text: text, Note: true}
	r.pending = append(r.pending, msg)
	recs := []checkpoint.Record{{Type: checkpoint.RecUser, Time: now(), Message: &msg}}
	return r.log.Append(append(recs, filesRecords(r.state().Round+1, told)...)...)
}

// learnTold tells the pool the files the notes of an interrupted round
// that resume keeps told the model of, as their records say: their
// changes were told, and Reconcile finds only what changed since.
func (r *run) learnTold(tail []checkpoint.Record) {
	var told []filepool.Change
	for _, t := range tail {
		if t.Type != checkpoint.RecFiles {
			continue
		}
		for _, f := range t.Files {
			now := poolEntry(f)
			if was, ok := r.pool.Lookup(f.Path); ok && f.Outside && was.Version() != now.Version() {
				told = append(told, filepool.Change{Path: was.Path, Was: was, Now: now.Version()})
			}
		}
	}
	r.pool.Accept(told)
}

// startWatching re-hashes the tracked files (what changed while the agent
// was down) and then watches them for the rest of the run.
func (r *run) startWatching(ctx context.Context) error {
	w, err := r.pool.Watch(ctx)
	if err != nil {
		return fmt.Errorf("watch the workspace: %w", err)
	}
	r.watcher = w
	changes, err := r.pool.Reconcile(ctx)
	if err != nil {
		return fmt.Errorf("re-hash the workspace: %w", err)
	}
	return r.noteOutsideChanges(ctx, changes, "while it was stopped")
}

// drainOutsideChanges tells the model what changed while it ran.
func (r *run) drainOutsideChanges(ctx context.Context) error {
	if r.watcher == nil {
		return nil
	}
	changes, err := r.watcher.Drain(ctx)
	if err != nil {
		return nil // watching is best effort; the next resume re-hashes
	}
	return r.noteOutsideChanges(ctx, changes, "since its last turn")
}

// recordReads tells the pool what the round's calls read, as the
// workspace holds it now: the round's changes are not applied yet, so
// that is what the calls saw, unless something outside the agent changed
// it in the meantime. A file the call's recording hashed as it finished
// (verify_record.go) is not read again.
func (r *run) recordReads(ctx context.Context, round int, results []callResult) {
	for _, res := range results {
		for _, p := range res.reads {
			var e filepool.Entry
			var err error
			if v, ok := res.sight.version(p); ok {
				e, err = r.pool.Record(filepool.Entry{Path: p, Exists: true, Hash: v.Hash, Size: v.Size,
					Round: round, Call: res.call.ID, Op: filepool.OpRead})
			} else {
				e, err = r.pool.Saw(ctx, p, round, res.call.ID, filepool.OpRead)
			}
			if err == nil {
				r.roundFiles = append(r.roundFiles, fileEntry(e))
			}
		}
	}
}
