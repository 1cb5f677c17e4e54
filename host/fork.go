package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/internal/syncpoint"
)

// Snapshot bookmarks an agent's last committed round together with a copy
// of its workspace as it is now, under label (default "round-N"), so that
// Fork can start a new agent from it later. It takes the agent's lock, so
// the workspace is not changing while it is copied.
//
// # Errors
//
// checkpoint.ErrNotFound, checkpoint.ErrLocked while the agent runs,
// ErrWorkspaceTooLarge.
func (e *Engine) Snapshot(ctx context.Context, id, label string) (*checkpoint.Bookmark, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	b, archive, err := e.capture(id, label)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err) // capture's error names the agent
	}
	if b.Workspace, err = e.store.PutBlob(archive); err != nil {
		return nil, fmt.Errorf("snapshot agent %q: %w", id, err)
	}
	if err := e.store.PutBookmark(id, *b); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err) // the store's error names the agent
	}
	return b, nil
}

// capture reads an agent's boundary and archives its workspace, under the
// agent's lock.
func (e *Engine) capture(id, label string) (*checkpoint.Bookmark, []byte, error) {
	lock, err := e.store.Lock(id, checkpoint.ThisProcess("snapshot"))
	if err != nil {
		return nil, nil, err
	}
	defer lock.Unlock()
	rec, err := e.store.Read(id)
	if err != nil {
		return nil, nil, err
	}
	if label == "" {
		label = fmt.Sprintf("round-%d", rec.State.Round)
	}
	archive, err := archiveWorkspace(rec.State.Definition.Workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("archive the workspace of agent %q: %w", id, err)
	}
	return &checkpoint.Bookmark{Label: label, Round: rec.State.Round, Time: now(), State: rec.State,
		Pending: prompts(rec.Tail)}, archive, nil
}

// prompts are the user's messages an open round began with.
func prompts(tail []checkpoint.Record) []conversation.Message {
	var out []conversation.Message
	for _, t := range tail {
		if t.Type == checkpoint.RecUser && t.Message != nil {
			out = append(out, *t.Message)
		}
	}
	return out
}

// promptsAfter are the user's messages the round after a boundary of n
// messages began with, in the conversation msgs that goes on from it.
func promptsAfter(msgs []conversation.Message, n int) []conversation.Message {
	var out []conversation.Message
	for i := n; i < len(msgs) && msgs[i].Role == conversation.RoleUser; i++ {
		out = append(out, msgs[i])
	}
	return out
}

// ForkOptions says which agent to fork, from where, and into what.
type ForkOptions struct {
	ID string
	// From is a bookmark's label; empty forks the last committed round
	// with the workspace as it is now, unless AtRound is set.
	From string
	// AtRound, when Past is set, forks the boundary of that round (0: the
	// agent as it started) with the workspace as it was then, rebuilt
	// from the store's pasts (see Timeline in package checkpoint).
	AtRound int
	Past    bool
	// As is the new agent's id; empty makes one.
	As string
	// Workspace is the new agent's workspace directory: it must not exist
	// or be empty, and receives a copy of the original's. Empty means a
	// sibling of the original's, named after the new agent.
	Workspace string
}

// Forked is the agent a Fork made and where it came from.
type Forked struct {
	// Agent is the new agent's id, Workspace its workspace directory.
	Agent, Workspace string
	// From is the agent it was forked from, at the boundary of Round; Label
	// is the bookmark it was forked from, if one was named.
	From  string
	Round int
	Label string
}

// ErrNoBookmark: Fork named a label the agent has no bookmark for.
var ErrNoBookmark = errors.New("no such bookmark")

// Fork makes a new agent from another's boundary: its conversation,
// accounting, labels and definition, with a copy of its workspace, and its
// lineage recorded. The two share nothing afterwards: each has its own
// journal and workspace. The original is not changed. In a store that
// keeps pasts, the new agent's whole workspace is kept as its first past,
// at the round it was forked at, as a new run keeps its first: it can be
// resumed on another node with ResumeOptions.Workspace before it ever ran.
// What can refuse the fork is checked before the new agent is locked.
//
// A fork at a past round, or from a bookmark, reads the agent's pasts or
// bookmarks without its lock, and then the blobs they name: `cairn gc`
// run meanwhile, with Retention.Rounds, replaces the pasts and removes
// the blobs that only the rounds it removed used (their files, a whole
// workspace older than the oldest kept), and with Retention.Bookmarks
// removes the oldest bookmarks and the blobs only they used (their
// workspaces, and agent files and modules only they named). A blob
// found missing is checked against the pasts or
// bookmarks as they are now: a round or bookmark gc removed is refused
// as such, naming what is left, and one it kept is forked again from
// them. A failed fork leaves nothing, so it can be tried again; a fork
// killed once its workspace was in place leaves it, with its mark
// (forkMarkName), and the same fork run again goes on from there, once
// it has found the workspace to be what it fills (checkFilled); until the
// agent is made the fork marks the workspace in the store too, so that
// Collect names one a killed fork left (sweepMarked).
//
// # Errors
//
// checkpoint.ErrNotFound (for a blob of the workspace, when the store
// lost it), ErrDefinitionLost (for a blob of the definition: the agent
// file, script or a module the store lost), checkpoint.ErrExists when As names an agent, checkpoint.ErrLocked when
// forking the last round of an agent that runs, ErrNoBookmark,
// checkpoint.ErrNoPast, a workspace directory that is not empty, and
// ErrWorkspaceDiffers (a *ForkFilledDiffError) for the workspace a killed
// run of the same fork filled, changed since.
func (e *Engine) Fork(ctx context.Context, opts ForkOptions) (*Forked, error) {
	for tries := 1; ; tries++ {
		f, err := e.fork(ctx, opts)
		if err == nil || !(errors.Is(err, checkpoint.ErrNotFound) || errors.Is(err, ErrDefinitionLost)) || tries == 3 {
			return f, err
		}
		again := false
		switch {
		case opts.Past:
			again, err = e.roundKept(opts, err)
		case opts.From != "":
			again, err = e.bookmarkKept(opts, err)
		}
		if !again {
			return nil, err
		}
	}
}

// roundKept says whether the round a fork at a past round failed to read
// (err) is kept in the pasts as they are now, to try again; else the
// error to fail with: the round's refusal when gc removed it, or err.
func (e *Engine) roundKept(opts ForkOptions, err error) (bool, error) {
	tl, ok := e.store.(checkpoint.Timeline)
	if !ok {
		return false, err
	}
	pasts, perr := tl.Pasts(opts.ID)
	if perr != nil || len(pasts) == 0 {
		return false, err
	}
	if _, perr := checkpoint.PastAt(pasts, opts.ID, opts.AtRound); perr != nil {
		if pasts[0].Trimmed && opts.AtRound < pasts[0].Round {
			return false, fmt.Errorf("fork: %w", perr) // removed while the fork read it
		}
		return false, err
	}
	return true, nil
}

// bookmarkKept says whether the bookmark a fork failed to read (err) is
// still there, to try again; else the error to fail with: the bookmark's
// refusal, naming those left, when it was removed while the fork read it.
func (e *Engine) bookmarkKept(opts ForkOptions, err error) (bool, error) {
	marks, merr := e.store.Bookmarks(opts.ID)
	if merr != nil {
		return false, err
	}
	left := make([]string, 0, len(marks))
	for _, b := range marks {
		if b.Label == opts.From {
			return true, nil
		}
		left = append(left, b.Label)
	}
	names := "none"
	if len(left) > 0 {
		names = strings.Join(left, ", ")
	}
	return false, fmt.Errorf("fork: agent %q: %w %q: it was removed while the fork read it, as `cairn gc --keep-bookmarks` removes the oldest; "+
		"bookmarks left: %s (cairn show %s lists them)", opts.ID, ErrNoBookmark, opts.From, names, opts.ID)
}

// fork is Fork, once.
func (e *Engine) fork(ctx context.Context, opts ForkOptions) (*Forked, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	if opts.As == "" {
		opts.As = opts.ID + "-fork-" + newID()
	}
	if err := checkpoint.CheckID(opts.As); err != nil {
		return nil, err
	}
	// What can refuse the fork is read before the new agent's lock is
	// taken, so that a refused fork leaves no lock (a lease row, with
	// PostgreSQL) for an agent it never made.
	if e.store.Exists(opts.As) {
		if f, ok, err := e.madeBefore(opts); ok {
			return f, err
		}
		return nil, fmt.Errorf("fork as %q: %w", opts.As, checkpoint.ErrExists)
	}
	src, ws, err := e.forkFrom(opts)
	if err != nil {
		return nil, fmt.Errorf("fork: %w", err) // forkSource's error names the agent
	}
	if err := e.unkeptAboveOf(ctx, src.State); err != nil {
		return nil, fmt.Errorf("fork agent %q: %w", opts.ID, err)
	}
	if opts.Workspace == "" {
		opts.Workspace = src.State.Definition.Workspace + "-" + opts.As
	}
	if opts.Workspace, err = filepath.Abs(opts.Workspace); err != nil {
		return nil, err
	}
	if opts.Workspace, err = linkedWorkspace(opts.Workspace); err != nil {
		return nil, fmt.Errorf("fork agent %q: %w", opts.ID, err)
	}
	mark := forkMark{Agent: opts.As, From: opts.ID, Round: src.Round, Label: opts.From, Past: opts.Past}
	// filled: the directory holds what this same fork, killed, filled.
	filled, err := mark.filledIn(opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("fork agent %q: %w", opts.ID, err)
	}
	st, err := forkedState(src, opts)
	if err != nil {
		return nil, err
	}
	if err := e.definitionKept(st.Definition, opts); err != nil {
		return nil, err
	}
	lock, err := e.store.Lock(opts.As, checkpoint.ThisProcess("fork"))
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	if e.store.Exists(opts.As) {
		return nil, fmt.Errorf("fork as %q: %w", opts.As, checkpoint.ErrExists)
	}
	// Marked in the store until the agent is made, a workspace a killed
	// fork left filled is found by `cairn gc` (sweepMarked), wherever it
	// is and whatever the new agent's id, which a retry may not know.
	// The directories it is to make are marked too: a fork killed before
	// it filled the workspace leaves them empty, and gc removes them.
	release, err := markFill(e.store, checkpoint.FillMark{Dir: opts.Workspace, Makes: toMake(opts.Workspace), Agent: opts.As})
	if err != nil {
		return nil, fmt.Errorf("fork agent %q: %w", opts.ID, err)
	}
	defer func() { release(mark.leftIn(opts.Workspace)) }()
	var base string
	// kept: the workspace stays as it is if the fork fails: the new
	// agent's, the killed fork's it goes on from, or another's that
	// filled the directory first.
	kept := filled
	if filled {
		// Under the lock no other fork as opts.As fills it: it is as the
		// killed fork left it.
		if filled, err = mark.filledIn(opts.Workspace); err != nil || !filled {
			return nil, fmt.Errorf("fork agent %q: workspace %s %w; fork as another agent, or move the directory away",
				opts.ID, opts.Workspace, ErrWorkspaceNotEmpty)
		}
		// Files changed in it since are not the fork's to take.
		if err := checkFilled(ws, opts.Workspace, opts); err != nil {
			return nil, fmt.Errorf("fork agent %q: %w", opts.ID, err)
		}
		if base, err = e.forkBase(ws, opts.Workspace); err != nil {
			return nil, fmt.Errorf("fork agent %q: keep the new agent's workspace in the store: %w", opts.ID, err)
		}
	} else {
		// A fork that fails from here on takes back what it wrote of the
		// workspace, so that nothing is changed and a retry finds it empty.
		made, err := makeEmptyDir(opts.Workspace)
		if err != nil {
			if kept {
				return nil, fmt.Errorf("fork agent %q: %w; fork as another agent, or into another directory", opts.ID, err)
			}
			return nil, fmt.Errorf("fork agent %q: %w", opts.ID, err)
		}
		held, err := holdWorkspace(opts.Workspace)
		if err != nil {
			made.undo()
			return nil, fmt.Errorf("fork agent %q: %w", opts.ID, err)
		}
		defer func() {
			if !kept {
				made.undo()
			}
			held.Close()
		}()
		if base, err = e.fillForkWorkspace(ws, opts.Workspace, mark); err != nil {
			kept = errors.Is(err, ErrWorkspaceNotEmpty)
			if kept {
				return nil, fmt.Errorf("fork agent %q: %w; fork as another agent, or into another directory", opts.ID, err)
			}
			return nil, fmt.Errorf("fork agent %q: %w", opts.ID, err)
		}
	}
	log, err := e.store.Create(opts.As, st)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(appendPrompts(log, src.Pending), log.Close()); err != nil {
		return nil, errors.Join(err, e.store.Remove(opts.As))
	}
	if err := e.keepForkBase(st, base); err != nil {
		// Made without it, the agent could not travel: it is not made.
		return nil, errors.Join(err, e.store.Remove(opts.As))
	}
	kept = true
	if err := removeForkMark(opts.Workspace); err != nil {
		return nil, fmt.Errorf("fork agent %q: agent %q was made, but %s is left in its workspace, which the fork could not remove: remove it (%w)",
			opts.ID, opts.As, forkMarkName, err)
	}
	return &Forked{Agent: st.Agent, Workspace: st.Definition.Workspace, From: st.Lineage.Agent,
		Round: st.Lineage.Round, Label: st.Lineage.Label}, nil
}

// madeBefore finishes the same fork, killed once it had made the agent
// opts.As and before it removed its mark from the agent's workspace: under
// the agent's lock, it journals the prompts the fork had not journaled yet
// (promptsKept), removes the mark, and says what was forked. False for an
// agent made otherwise, or one a process holds; an error, with true, when
// the fork is this one and could not be finished.
func (e *Engine) madeBefore(opts ForkOptions) (*Forked, bool, error) {
	rec, err := e.store.Read(opts.As)
	if err != nil || rec.State.Lineage == nil {
		return nil, false, nil
	}
	st := rec.State
	if opts.Workspace != "" {
		if ws, err := filepath.Abs(opts.Workspace); err != nil || ws != st.Definition.Workspace {
			return nil, false, nil
		}
	}
	mark := forkMark{Agent: opts.As, From: opts.ID, Round: st.Lineage.Round, Label: opts.From, Past: opts.Past}
	if st.Lineage.Agent != opts.ID || st.Lineage.Label != opts.From || opts.Past && opts.AtRound != st.Lineage.Round {
		return nil, false, nil
	}
	if filled, err := mark.filledIn(st.Definition.Workspace); err != nil || !filled {
		return nil, false, nil
	}
	lock, err := e.store.Lock(opts.As, checkpoint.ThisProcess("fork"))
	if err != nil {
		return nil, false, nil
	}
	defer lock.Unlock()
	if err := e.promptsKept(opts); err != nil {
		return nil, true, fmt.Errorf("fork agent %q as %q, run again: the agent was made, but the prompts its source's open round began with "+
			"could not be journaled into it: %w; run the fork again, or resume the agent with a prompt of your own", opts.ID, opts.As, err)
	}
	if removeForkMark(st.Definition.Workspace) != nil {
		return nil, false, nil
	}
	return &Forked{Agent: st.Agent, Workspace: st.Definition.Workspace, From: st.Lineage.Agent,
		Round: st.Lineage.Round, Label: st.Lineage.Label}, true, nil
}

// promptsKept journals into the agent opts.As, which a fork killed before
// it journaled them made, the prompts its source's open round began with
// (appendPrompts), as the fork would have: those of the bookmark it
// forks, or, as forkPast reads them, those the source's open round began
// with when it is at the round forked still, else those that follow the
// fork's boundary in its conversation. An agent whose journal holds
// anything, the prompts or a run since, is left as it is. The caller
// holds the agent's lock.
func (e *Engine) promptsKept(opts ForkOptions) (err error) {
	rec, log, err := e.store.Open(opts.As)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, log.Close()) }()
	if len(rec.Tail) > 0 || len(rec.State.Runs) > 0 {
		return nil
	}
	if opts.From != "" {
		marks, err := e.store.Bookmarks(opts.ID)
		if err != nil {
			return err
		}
		for _, b := range marks {
			if b.Label == opts.From {
				return appendPrompts(log, b.Pending)
			}
		}
		return fmt.Errorf("agent %q: %w %q (cairn show %s lists them)", opts.ID, ErrNoBookmark, opts.From, opts.ID)
	}
	src, err := e.store.Read(opts.ID)
	if err != nil {
		return err
	}
	if src.State.Round == rec.State.Lineage.Round {
		return appendPrompts(log, prompts(src.Tail))
	}
	return appendPrompts(log, promptsAfter(src.State.Messages, len(rec.State.Messages)))
}

// forkMarkName is the file a fork writes into the new agent's workspace
// as it fills it, naming the fork, and removes once the agent is made: a
// fork killed between the workspace's rename into place and the agent's
// making leaves it, and the same fork run again finds its own workspace
// there (forkMark.filledIn) and goes on, where any other fork is refused
// the directory as one that is not empty.
const forkMarkName = ".cairn-fork-unmade"

// maxForkMark bounds what is read of a fork mark: far more than one
// holds (two ids, a round), so that a huge file of that name in a
// directory a fork or gc looks at is not read whole.
const maxForkMark = 64 << 10

// forkMark is what forkMarkName holds: the new agent, and what it is
// forked from.
type forkMark struct {
	Agent string `json:"agent"`
	From  string `json:"from"`
	Round int    `json:"round"`
	Label string `json:"label,omitempty"`
	Past  bool   `json:"past,omitempty"`
}

// filledIn says whether dir holds the workspace this same fork filled
// and was killed before it made the agent: false for a missing or empty
// directory.
//
// # Errors
//
// ErrWorkspaceNotEmpty for a directory that holds anything else (its
// mark, when it has one, of another fork, or of the same agent forked
// from another round).
func (m forkMark) filledIn(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		return false, nil
	}
	b, err := readPlainFile(filepath.Join(dir, forkMarkName), maxForkMark)
	var had forkMark
	if err != nil || json.Unmarshal(b, &had) != nil {
		return false, fmt.Errorf("workspace %s %w; fork as another agent, or move the directory away", dir, ErrWorkspaceNotEmpty)
	}
	if had != m {
		return false, fmt.Errorf("workspace %s %w: it holds the workspace of a fork of agent %q at round %d as %q, which has not made that agent "+
			"(a fork killed then is made by running it again); fork into another directory, or move this one away", dir, ErrWorkspaceNotEmpty, had.From, had.Round, had.Agent)
	}
	return true, nil
}

// leftIn says whether dir holds this mark: the fork has not made its
// agent, or has not removed the mark once it did.
func (m forkMark) leftIn(dir string) bool {
	had, ok := readForkMark(dir)
	return ok && had == m
}

// readForkMark reads the fork mark in dir; false when it holds none.
func readForkMark(dir string) (forkMark, bool) {
	var m forkMark
	b, err := readPlainFile(filepath.Join(dir, forkMarkName), maxForkMark)
	if err != nil || json.Unmarshal(b, &m) != nil {
		return forkMark{}, false
	}
	return m, true
}

// write writes the mark into dir, durably.
func (m forkMark) write(dir string) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, forkMarkName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		return err
	}
	return syncpoint.SyncFile(dir)
}

// removeForkMark removes the mark from the new agent's workspace dir,
// durably, once the agent is made.
func removeForkMark(dir string) error {
	if err := os.Remove(filepath.Join(dir, forkMarkName)); err != nil {
		return err
	}
	return syncpoint.SyncFile(dir)
}

// ErrDefinitionLost: a fork's source names a file of its definition (its
// agent file, script, a tool module, an agent file above it) whose blob
// the store no longer keeps, so that the fork could not run.
var ErrDefinitionLost = errors.New("is missing from the store")

// definitionKept checks, before the fork makes anything, that the store
// keeps every blob the new agent's definition d names. A store that can
// tell (a file store) is asked whether it keeps each, which makes it
// fresh, and another has it stored again: either way `cairn gc` then
// keeps it for its grace period, until the new agent names it. A tool
// module missing is stored again from its source when those bytes still
// have its digest, as a run of the agent would. A gc that removed the
// source's bookmark or round meanwhile may have removed a blob only it
// named (an agent file the agent has since changed): the fork then fails
// with ErrDefinitionLost, which Fork refuses as a source removed while it
// read it; a blob lost otherwise is named, with what to do.
func (e *Engine) definitionKept(d checkpoint.Definition, opts ForkOptions) error {
	lost := func(what, digest string, err error) error {
		return fmt.Errorf("fork agent %q: the %s of %s (blob %s) %w, so the fork could not run: "+
			"restore the store's blobs from a backup (or `cairn import` an export that holds it), or fork another bookmark or round (cairn show %s lists them) (%v)",
			opts.ID, what, forkSourceName(opts), digest, ErrDefinitionLost, opts.ID, err)
	}
	kept := func(digest string) (bool, error) {
		if has, ok := hasBlob(e.store, digest); ok {
			return has, nil
		}
		data, err := e.store.Blob(digest)
		if err == nil {
			_, err = e.store.PutBlob(data)
		}
		if errors.Is(err, checkpoint.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	type named struct{ what, digest string }
	blobs := []named{{"agent file", d.AgentFile}, {"script", d.Script}}
	for _, a := range d.Above {
		blobs = append(blobs, named{"agent file above it, " + a.Path + ",", a.File})
	}
	for _, b := range blobs {
		if b.digest == "" {
			continue
		}
		if has, err := kept(b.digest); err != nil {
			return fmt.Errorf("fork agent %q: %s: %w", opts.ID, b.what, err)
		} else if !has {
			return lost(b.what, b.digest, checkpoint.ErrNotFound)
		}
	}
	for _, m := range sortedKeys(d.Modules) {
		has, err := kept(d.Modules[m])
		if err != nil {
			return fmt.Errorf("fork agent %q: tool module %s: %w", opts.ID, m, err)
		}
		if has {
			continue
		}
		// Its source may have it still: stored again, the fork runs.
		_, mods, err := e.rebuild(d)
		if err == nil {
			err = e.storeRebuilt(d, mods)
		}
		if err != nil {
			return lost("tool module "+m, d.Modules[m], err)
		}
		break
	}
	return nil
}

// forkSourceName names what a fork forks, as opts says.
func forkSourceName(opts ForkOptions) string {
	switch {
	case opts.Past:
		return fmt.Sprintf("round %d", opts.AtRound)
	case opts.From != "":
		return fmt.Sprintf("bookmark %q", opts.From)
	}
	return "its last round"
}

// unkeptAboveOf is Config.UnkeptAbove's refusal of the agent whose state
// is st, or of one above it: the agent files above it are not kept, and
// a fork, which copies its definition and lineage, would not meet their
// approval rules. Nil for any other agent, and for one whose files above
// it cannot be read for another reason (that is the fork's run's to say).
func (e *Engine) unkeptAboveOf(ctx context.Context, st *checkpoint.State) error {
	if e.unkeptAbove == nil {
		return nil
	}
	var unkept unkeptError
	if _, err := e.above(ctx, st, nil); errors.As(err, &unkept) {
		return err
	}
	return nil
}

// forkWorkspace is what fills a new agent's workspace directory, and the
// manifest of what it fills when the store keeps it already (a past
// round's workspace); nil when it must be read from the directory.
type forkWorkspace struct {
	fill     func(dir string) error
	manifest []checkpoint.WorkspaceEntry
	// archive is what fills it when manifest is nil (extractWorkspace).
	archive []byte
}

// fillForkWorkspace fills the new agent's workspace dir (made, empty)
// through a directory beside it (fillBeside), and keeps it in the store
// (forkBase).
func (e *Engine) fillForkWorkspace(ws forkWorkspace, dir string, mark forkMark) (string, error) {
	fill := func(d string) error {
		if err := ws.fill(d); err != nil {
			return err
		}
		return mark.write(d)
	}
	if err := fillBeside(e.store, dir, mark.Agent, fill); err != nil {
		return "", err
	}
	base, err := e.forkBase(ws, dir)
	if err != nil {
		return "", fmt.Errorf("keep the new agent's workspace in the store: %w", err)
	}
	return base, nil
}

// forkBase stores the new agent's whole workspace as it was filled, as a
// new run stores its first (storeBase), and returns its manifest's
// digest; "" when the store keeps no pasts or the copy is off.
func (e *Engine) forkBase(ws forkWorkspace, dir string) (string, error) {
	if e.timeline() == nil {
		return "", nil
	}
	if ws.manifest == nil {
		return e.storeForkBase(dir)
	}
	m, err := checkpoint.EncodeManifest(ws.manifest)
	if err != nil {
		return "", err
	}
	return e.store.PutBlob(m)
}

// storeForkBase stores the new agent's workspace dir as storeBase does,
// but for the fork's mark in it (forkMarkName).
func (e *Engine) storeForkBase(dir string) (string, error) {
	entries, err := scanWorkspace(dir, e.limit.orDefault(), nil)
	if err != nil {
		return "", err
	}
	entries = slices.DeleteFunc(entries, func(en checkpoint.WorkspaceEntry) bool { return en.Path == forkMarkName })
	if entries, err = putContents(e.store, dir, entries); err != nil {
		return "", err
	}
	m, err := checkpoint.EncodeManifest(entries)
	if err != nil {
		return "", err
	}
	return e.store.PutBlob(m)
}

// keepForkBase keeps the new agent's first past, the whole workspace at
// the round it was forked at, under its lock: a node that never saw the
// agent resumes it with --workspace from there, as it would a new agent.
// (A fork that dies before it is kept is an agent without one, which its
// first run keeps, where its workspace is.)
func (e *Engine) keepForkBase(st *checkpoint.State, base string) error {
	tl := e.timeline()
	if tl == nil || base == "" {
		return nil
	}
	p, err := checkpoint.NewPast(st, nil)
	if err != nil {
		return err
	}
	p.Base = base
	if err := tl.PutPast(st.Agent, p); err != nil {
		return fmt.Errorf("keep the workspace of agent %q: %w", st.Agent, err)
	}
	return nil
}

// forkFrom is the boundary to fork from and what fills the new agent's
// workspace directory.
func (e *Engine) forkFrom(opts ForkOptions) (*checkpoint.Bookmark, forkWorkspace, error) {
	if opts.Past {
		return e.forkPast(opts)
	}
	src, archive, err := e.forkSource(opts)
	if err != nil {
		return nil, forkWorkspace{}, err
	}
	return src, forkWorkspace{fill: func(dir string) error { return extractWorkspace(archive, dir) }, archive: archive}, nil
}

// forkPast is the boundary of a past round and its workspace, from the
// store's pasts. It reads the agent without its lock: pasts are only
// added to, but by `cairn gc --keep-rounds`, which replaces them whole
// under the lock, so that a read finds the pasts before or after it (and
// a round it removed meanwhile may lack a blob gc removed with it).
func (e *Engine) forkPast(opts ForkOptions) (*checkpoint.Bookmark, forkWorkspace, error) {
	rec, err := e.store.Read(opts.ID)
	if err != nil {
		return nil, forkWorkspace{}, err
	}
	tl, ok := e.store.(checkpoint.Timeline)
	if !ok {
		return nil, forkWorkspace{}, fmt.Errorf("agent %q: %w: %T keeps no past", opts.ID, ErrNoCopy, e.store)
	}
	pasts, err := tl.Pasts(opts.ID)
	if err != nil {
		return nil, forkWorkspace{}, err
	}
	if err := checkpoint.NoRound(pasts, opts.ID, opts.AtRound, rec.State.Round); err != nil {
		return nil, forkWorkspace{}, err
	}
	p, err := checkpoint.PastAt(pasts, opts.ID, opts.AtRound)
	if err != nil {
		return nil, forkWorkspace{}, err
	}
	st, err := checkpoint.StateAt(rec.State, p)
	if err != nil {
		return nil, forkWorkspace{}, err
	}
	m, err := checkpoint.WorkspaceAt(e.store, pasts, opts.ID, opts.AtRound)
	if err != nil {
		return nil, forkWorkspace{}, err
	}
	if m == nil {
		m = []checkpoint.WorkspaceEntry{} // an empty workspace, known
	}
	b := &checkpoint.Bookmark{Label: fmt.Sprintf("round-%d", p.Round), Round: p.Round, Time: now(), State: st}
	if p.Round < rec.State.Round {
		b.Pending = promptsAfter(rec.State.Messages, len(st.Messages))
	} else {
		b.Pending = prompts(rec.Tail)
	}
	return b, forkWorkspace{fill: func(dir string) error { return materializeAt(e.store, m, dir) }, manifest: m}, nil
}

// forkSource is the bookmark to fork from, or the agent's boundary and
// workspace now (under its lock).
func (e *Engine) forkSource(opts ForkOptions) (*checkpoint.Bookmark, []byte, error) {
	if opts.From == "" {
		return e.capture(opts.ID, "")
	}
	marks, err := e.store.Bookmarks(opts.ID)
	if err != nil {
		return nil, nil, err
	}
	for _, b := range marks {
		if b.Label == opts.From {
			archive, err := e.store.Blob(b.Workspace)
			if err != nil {
				return nil, nil, fmt.Errorf("workspace of bookmark %q of agent %q: %w", b.Label, opts.ID, err)
			}
			return &b, archive, nil
		}
	}
	return nil, nil, fmt.Errorf("agent %q: %w %q (cairn show %s lists them)", opts.ID, ErrNoBookmark, opts.From, opts.ID)
}

// forkedState is the new agent's first state.
func forkedState(b *checkpoint.Bookmark, opts ForkOptions) (*checkpoint.State, error) {
	st, err := b.State.Clone()
	if err != nil {
		return nil, err
	}
	st.Agent, st.Runs, st.UpdatedAt, st.WorkspaceBase = opts.As, nil, now(), ""
	st.Lineage = &checkpoint.Lineage{Agent: opts.ID, Round: b.Round, Label: opts.From}
	st.Definition.Workspace = opts.Workspace
	switch {
	case st.Status == checkpoint.StatusRunning:
		st.Status, st.Reason = checkpoint.StatusPaused, "forked from a run that had not ended"
	case st.Status == checkpoint.StatusApproval:
		// The open round, its calls awaiting a decision among them, is
		// not the fork's: resume asks the model again.
		st.Status, st.Reason = checkpoint.StatusPaused, fmt.Sprintf("forked while round %d awaited a decision: resume asks the model again", b.Round+1)
	case len(b.Pending) > 0:
		st.Status, st.Reason = checkpoint.StatusPaused, "forked with a prompt the model had not answered: resume asks it"
	}
	return st, nil
}

// appendPrompts journals a new agent's pending prompts, durably, as an
// open round's: its first run asks the model with them.
func appendPrompts(log checkpoint.Log, msgs []conversation.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	recs := make([]checkpoint.Record, len(msgs))
	for i := range msgs {
		recs[i] = checkpoint.Record{Type: checkpoint.RecUser, Time: now(), Message: &msgs[i]}
	}
	return errors.Join(log.Append(recs...), log.Sync())
}
