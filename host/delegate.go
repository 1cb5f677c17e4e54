package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

// Delegation: an agent file with `agents:` gives the model the delegate
// tool, which hands a task to one of its sub-agents (see SubAgent).
//
// The sub-agent is a durable agent of its own in the store, made by the
// delegation's call: its id is the parent's, the sub-agent's name and a
// digest of the call's id (so a call names the same child however often
// it runs), its state records its parent, the call and its depth, and it
// has its own journal, runs and events. It sees only its task: its
// conversation begins with the task as its prompt, and nothing of its
// parent's or siblings' transcripts reaches it. Its answer is the call's
// result, and the tokens and cost it spent are counted with the parent's
// when the round commits.
//
// It works in its parent's workspace, and its own calls' changes reach
// the workspace as any agent's do: staged, journaled, applied once, and
// finished by resume after a crash. The delegation itself changes
// nothing: what the tree changed is what its agents' calls applied, each
// exactly once.
//
// Several delegations of one turn run at once, at most max_parallel
// (4 when the agent file sets none). The parent's
// journal holds each delegation in flight as its call's "executing"
// phase; after a crash, resume runs such a call again, which resumes its
// child from the child's own boundary (a child that had finished is not
// run again: its answer is read from its state), and gives the parent
// the result. A child stopped by a limit or waiting for approval stops
// its parent's run the same way (see stopError): `cairn approve CHILD`
// and `cairn resume PARENT` reach it.

// delegateName is the delegate tool's name.
const delegateName = "delegate"

// defaultMaxParallel bounds the delegations that run at once when the
// agent file sets no max_parallel.
const defaultMaxParallel = 4

// maxDepth bounds how deep sub-agents nest.
const maxDepth = 8

type delegateTool struct {
	subs  []*subAgent
	slots chan struct{}
	once  sync.Once
}

// delegateTools gives an agent file with sub-agents the delegate tool,
// once each sub-agent's definition reads and narrows its parent's.
func delegateTools(af *AgentFile) ([]nativeTool, error) {
	if len(af.Agents) == 0 {
		return nil, nil
	}
	n := af.MaxParallel
	if n <= 0 {
		n = defaultMaxParallel
	}
	d := &delegateTool{slots: make(chan struct{}, n)}
	seen := map[string]bool{}
	for _, s := range af.Agents {
		if seen[s.Name] {
			return nil, fmt.Errorf("%w: %s line %d: two sub-agents are named %s", ErrSubAgent, af.describe(), s.line, s.Name)
		}
		seen[s.Name] = true
		sub, err := s.resolve(af)
		if err != nil {
			return nil, err
		}
		d.subs = append(d.subs, sub)
	}
	return []nativeTool{d}, nil
}

func (d *delegateTool) Spec() model.Tool {
	names := make([]string, len(d.subs))
	var b strings.Builder
	b.WriteString("Hand a task to a sub-agent. It works on the task alone, in the same workspace, seeing only " +
		"the task you give (not this conversation), and its answer is this call's result. Give it everything " +
		"it needs to know. Delegations in one turn run in parallel. The sub-agents:")
	for i, s := range d.subs {
		names[i] = s.Name
		fmt.Fprintf(&b, "\n- %s: %s", s.Name, s.Description)
	}
	enum, _ := json.Marshal(names)
	schema := `{"type":"object","required":["agent","task"],"additionalProperties":false,"properties":{` +
		`"agent":{"enum":` + string(enum) + `},"task":{"type":"string","minLength":1}}}`
	return model.Tool{Name: delegateName, Description: b.String(), InputSchema: json.RawMessage(schema)}
}

// ResumesInFlight: a delegation in flight resumes its child.
func (d *delegateTool) ResumesInFlight() bool { return true }

// Begun: a delegation had begun once it was marked begun (see
// markDelegation), or once its child exists (a child an older cairn made,
// which marked nothing).
func (d *delegateTool) Begun(r *run, c conversation.ToolCall) bool {
	var in struct{ Agent string }
	if json.Unmarshal([]byte(c.Input), &in) != nil {
		return false
	}
	return r.delegationMade(r.state().Round+1, c.ID) || r.store.Exists(childID(r.agentID, in.Agent, c.ID))
}

func (d *delegateTool) Call(ctx context.Context, c *nativeCall) (nativeResult, error) {
	var in struct{ Agent, Task string }
	if err := json.Unmarshal(c.Input, &in); err != nil {
		return nativeResult{}, fmt.Errorf("%s: %w", delegateName, err)
	}
	var sub *subAgent
	for _, s := range d.subs {
		if s.Name == in.Agent {
			sub = s
		}
	}
	if sub == nil {
		return nativeResult{}, fmt.Errorf("%s: there is no sub-agent %q", delegateName, in.Agent)
	}
	p := c.run
	if p.depth+1 > maxDepth {
		return nativeResult{}, fmt.Errorf("%s: sub-agents nest at most %d deep, and this agent is at depth %d: do the task yourself",
			delegateName, maxDepth, p.depth)
	}
	d.once.Do(func() {
		if p.tree == nil {
			p.tree = newTree(p)
		} else if p.root != "" || p.tree.top != "" {
			p.tree = nested(p) // a sub-agent's own budget bounds its subtree
		}
	})
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return nativeResult{}, ctx.Err()
	}
	defer func() { <-d.slots }()
	return p.delegate(ctx, sub, childID(p.agentID, sub.Name, c.Call.ID), c.Round, c.Call.ID, in.Task)
}

// childID is the id of the sub-agent a call makes: the parent's id, the
// sub-agent's name and a digest of the call's id, within an id's length.
func childID(parent, name, call string) string {
	sum := sha256.Sum256([]byte(parent + "\x00" + call))
	tail := "." + name + "-" + hex.EncodeToString(sum[:4])
	if len(parent)+len(tail) > 128 {
		parent = parent[:128-len(tail)]
	}
	return parent + tail
}

// delegate runs (or resumes, or reads the answer of) the sub-agent id for
// the call of round, and returns what the call came to. A delegation is
// marked begun, durably, before its child is made; one marked begun whose
// child is no longer in the store is not started anew: its child's
// changes may be in the workspace, and its result says so (gone).
func (r *run) delegate(ctx context.Context, sub *subAgent, id string, round int, call, task string) (nativeResult, error) {
	s := &subRun{tree: r.tree, root: r.rootID(), forward: r.forward, above: r.af,
		lineage: checkpoint.Parent{Agent: r.agentID, Call: call, Name: sub.Name, Depth: r.depth + 1}}
	if r.delegationMade(round, call) {
		if !r.store.Exists(id) {
			return r.gone(sub.Name, id), nil
		}
	} else if rec := r.earlierChild(round, call, id); rec != nil {
		return nativeResult{}, &stopError{Status: StatusFailed, Reason: fmt.Sprintf("sub-agent %s: %v", sub.Name,
			&foreignChildError{id: id, root: r.rootID(), want: s.lineage, got: rec.State.Parent, earlier: true})}
	} else if err := r.markDelegation(round, call, id); err != nil {
		return nativeResult{}, &stopError{Status: StatusFailed,
			Reason: fmt.Sprintf("sub-agent %s (agent %s) could not start: %v", sub.Name, id, err)}
	}
	existed := r.store.Exists(id)
	res, err := r.runChild(ctx, sub, id, task, s, func() { r.delegationMadeNow(round, call) })
	switch {
	case r.store.Exists(id):
	case existed || err == nil || errors.Is(err, checkpoint.ErrLocked) || errors.Is(err, checkpoint.ErrNotFound):
		// Its store went from under it (removed, or moved aside): no
		// other process runs it, whatever the lock's loss said.
		return nativeResult{}, &stopError{Status: StatusPaused, Reason: vanished(sub.Name, id, r.rootID())}
	default:
		// It could not be made: it never began, and a resume starts it.
		r.unmarkDelegation(round, call)
	}
	if ctx.Err() != nil {
		return nativeResult{}, ctx.Err()
	}
	var foreign *foreignChildError
	if errors.As(err, &foreign) {
		return nativeResult{}, &stopError{Status: StatusFailed, Reason: fmt.Sprintf("sub-agent %s: %v", sub.Name, err)}
	}
	if errors.Is(err, checkpoint.ErrLocked) {
		// Another process runs the sub-agent: nothing failed; the tree
		// waits for it at this boundary.
		return nativeResult{}, &stopError{Status: StatusPaused,
			Reason: fmt.Sprintf("sub-agent %s (agent %s) is run by another process: %v; resume once it ends", sub.Name, id, err)}
	}
	if err != nil {
		return nativeResult{}, &stopError{Status: StatusFailed,
			Reason: fmt.Sprintf("sub-agent %s (agent %s) could not run: %v", sub.Name, id, err)}
	}
	rec, err := r.store.Read(id)
	if err != nil {
		return nativeResult{}, &stopError{Status: StatusFailed, Reason: fmt.Sprintf("sub-agent %s: %v", id, err)}
	}
	usage := rec.State.Usage
	out := nativeResult{Usage: &usage, child: id}
	switch res.Status {
	case StatusDone:
		out.Output = answerOf(rec.State)
	case StatusFailed:
		out.Output, out.IsError = fmt.Sprintf("The sub-agent %s failed: %s", sub.Name, res.Reason), true
	default:
		return nativeResult{}, &stopError{Status: res.Status, Reason: stoppedChild(sub.Name, id, r.rootID(), res)}
	}
	return out, nil
}

// runChild runs the sub-agent: a new one with its task, or one that exists
// from its boundary. made is called as its run starts: it exists in the
// store, and has done nothing yet.
func (r *run) runChild(ctx context.Context, sub *subAgent, id, task string, s *subRun, made func()) (*Result, error) {
	forward := r.forward
	onEvent := func(e Event) {
		if e.Type == EventRunStart && e.Agent == id {
			made()
		}
		if forward != nil {
			forward(e)
		}
	}
	opts := RunOptions{Agent: sub.af, ID: id, Workspace: r.workspace, Prompt: task, Labels: r.state().Labels,
		OnEvent: onEvent, Approver: r.approver, AutoDeny: r.autoDeny, sub: s}
	if r.store.Exists(id) {
		rec, err := r.store.Read(id)
		if err != nil {
			return nil, err
		}
		if p := rec.State.Parent; p == nil || *p != s.lineage {
			return nil, &foreignChildError{id: id, root: r.rootID(), want: s.lineage, got: p}
		}
		if made, ok := taskOf(rec); ok && made != task {
			// Its lineage is this delegation's, but an earlier agent of
			// the parent's id made it (that agent's state was removed
			// and the id made anew, as a retried workflow step is): its
			// answer is to another task.
			return nil, &foreignChildError{id: id, root: r.rootID(), want: s.lineage, got: rec.State.Parent, task: made}
		}
		if !rec.Interrupted() && rec.State.Status == checkpoint.StatusDone {
			return &Result{Agent: id, Status: StatusDone}, nil // its answer is in its state
		}
		if !neverPrompted(rec) {
			return r.engine.Resume(ctx, ResumeOptions{ID: id, Strategy: StrategySeal, OnEvent: onEvent,
				Approver: r.approver, AutoDeny: r.autoDeny, sub: s})
		}
		// Made, then stopped before its task was journaled: start it over.
		opts.Fresh = true
	}
	return r.engine.Run(ctx, opts)
}

// taskOf is the task a sub-agent was made with: its first prompt, kept in
// its state until its first run starts, then in its conversation or its
// interrupted round; ok is false for one that has none yet.
func taskOf(rec *checkpoint.Recovered) (task string, ok bool) {
	if rec.State.Prompt != "" {
		return rec.State.Prompt, true
	}
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleUser && !m.Note {
			return m.Text, true
		}
	}
	for _, t := range rec.Tail {
		if t.Type == checkpoint.RecUser && t.Message != nil && !t.Message.Note {
			return t.Message.Text, true
		}
	}
	return "", false
}

// earlierChild is the agent at the child id of a delegation that no mark
// says began when it was made before this agent's first run started: an
// earlier agent of this agent's id made it (that agent's state was
// removed, and the id made anew), and its answer is not this
// delegation's. nil for none, and for a child made after (one an older
// cairn made, which marked nothing, or one of an imported tree, whose
// marks stayed behind).
func (r *run) earlierChild(round int, call, id string) *checkpoint.Recovered {
	if _, err := os.Stat(r.delegationMark(round, call)); !errors.Is(err, os.ErrNotExist) || !r.store.Exists(id) {
		return nil
	}
	runs := r.state().Runs
	rec, err := r.store.Read(id)
	if err != nil || len(runs) == 0 || len(rec.State.Runs) == 0 || !rec.State.Runs[0].Started.Before(runs[0].Started) {
		return nil
	}
	return rec
}

// neverPrompted reports whether a sub-agent stopped before its task
// reached its journal.
func neverPrompted(rec *checkpoint.Recovered) bool {
	if len(rec.State.Messages) > 0 {
		return false
	}
	for _, t := range rec.Tail {
		if t.Type == checkpoint.RecUser {
			return false
		}
	}
	return true
}

// answerOf is the sub-agent's answer: its last message, the model's text.
func answerOf(st *checkpoint.State) string {
	for i := len(st.Messages) - 1; i >= 0; i-- {
		if m := st.Messages[i]; m.Role == conversation.RoleAssistant {
			return m.Text
		}
	}
	return ""
}

// stoppedChild says why a sub-agent stopped its tree, and how to go on,
// unless its reason says so already: a sub-agent of its own stopped it,
// and said how to go on from the same root.
func stoppedChild(name, id, root string, res *Result) string {
	how := fmt.Sprintf("`cairn resume %s` resumes it", root)
	switch {
	case strings.Contains(res.Reason, "`cairn resume "+root+"`"):
		return fmt.Sprintf(childStopPrefix+"%s (agent %s) stopped: %s", name, id, res.Reason)
	case res.Status == StatusAwaitingApproval:
		call := res.AwaitingCall()
		how = fmt.Sprintf("decide with `cairn approve %s %s` or `cairn deny %s %s`, then `cairn resume %s`", id, call, id, call, root)
	case res.Status == StatusPaused && strings.HasPrefix(res.Reason, limitPrefix):
		// Its own limit (limitReached), which a resume of the parent
		// does not raise: the tree's begin "the tree of".
		how = fmt.Sprintf("the limit is the sub-agent's own: raise it resuming the sub-agent (`cairn resume %s` with that flag), then `cairn resume %s`", id, root)
	}
	return fmt.Sprintf(childStopPrefix+"%s (agent %s) stopped: %s; %s", name, id, res.Reason, how)
}

// childStopPrefix begins the reason of a run that a sub-agent of its tree
// stopped (stoppedChild).
const childStopPrefix = "sub-agent "

// StoppedBySubAgent reports whether a sub-agent of the run's tree stopped
// it: the Reason then names the sub-agent and says how to go on.
func (r *Result) StoppedBySubAgent() bool { return strings.HasPrefix(r.Reason, childStopPrefix) }

var _ nativeResumer = (*delegateTool)(nil)

// delegated reports whether an interrupted round had begun a delegation:
// its child may have changed the workspace, so replay must keep the round.
func delegated(tail []checkpoint.Record) bool {
	for _, t := range tail {
		if t.Tool == delegateName && (t.Type == checkpoint.RecResult || t.Type == checkpoint.RecPhase && t.Phase == checkpoint.PhaseExecuting) {
			return true
		}
	}
	return false
}

// A delegation's mark says it had begun: it is written, durably, once the
// delegation has its slot and before its child is made, at
// delegations/round-N/CALL beside the parent's staging (in its directory
// of a file store), holding the child's id; a second line, "made", is
// added, durably, once the child exists and before it runs (its
// run_start), and the mark is removed when the round commits. A mark
// without that line is a stop's between the two: the child, had it been
// made, did nothing. The child's existence alone cannot say so: a child's directory
// removed or moved aside (as the store's corruption error advises) would
// make a delegation that had begun, and changed the workspace, look like
// one that waited for its slot, and resume would run it again from its
// task. Such a delegation's result says its child is gone instead.

// delegationDir holds the marks of round's delegations.
func (r *run) delegationDir(round int) string {
	return filepath.Join(filepath.Dir(r.staging), "delegations", fmt.Sprintf("round-%d", round))
}

func (r *run) delegationMark(round int, call string) string {
	return filepath.Join(r.delegationDir(round), unsafeName.ReplaceAllString(call, "_"))
}

// delegationMade reports whether the call of round had begun its
// delegation: its mark says its child was made. A mark without it was
// left by a stop before the child was made, which did nothing.
func (r *run) delegationMade(round int, call string) bool {
	b, err := os.ReadFile(r.delegationMark(round, call))
	return err == nil && strings.HasSuffix(string(b), "\n"+madeLine+"\n")
}

// madeLine ends the mark of a delegation whose child was made.
const madeLine = "made"

// delegationMadeNow records in the call's mark, durably, that its child
// was made and is about to run. A mark that cannot be completed leaves
// the delegation as one whose child, if it is gone at a resume, is made
// again: as it was before marks.
func (r *run) delegationMadeNow(round int, call string) {
	f, err := os.OpenFile(r.delegationMark(round, call), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	if _, err := f.WriteString(madeLine + "\n"); err == nil {
		f.Sync()
	}
	f.Close()
}

// markDelegation marks the call of round begun, for the child id, and
// makes the mark durable.
func (r *run) markDelegation(round int, call, id string) error {
	dir := r.delegationDir(round)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("mark delegation %s begun: %w", call, err)
	}
	f, err := os.OpenFile(r.delegationMark(round, call), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("mark delegation %s begun: %w", call, err)
	}
	_, err = f.WriteString(id + "\n")
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("mark delegation %s begun: %w", call, err)
	}
	return syncDirs(dir, filepath.Dir(dir), filepath.Dir(filepath.Dir(dir)))
}

// unmarkDelegation takes back the mark of a delegation whose child could
// not be made.
func (r *run) unmarkDelegation(round int, call string) {
	if os.Remove(r.delegationMark(round, call)) == nil {
		_ = syncDirs(r.delegationDir(round))
	}
}

// forgetDelegations removes the marks of a committed round: its
// delegations have their results in the state.
func (r *run) forgetDelegations(round int, results []callResult) {
	for _, res := range results {
		if res.call.Name == delegateName {
			os.RemoveAll(r.delegationDir(round))
			return
		}
	}
}

// gone is the result of a delegation that had begun and whose child is no
// longer in the store: what it did is unknown, and the model decides.
func (r *run) gone(name, id string) nativeResult {
	text := fmt.Sprintf("The sub-agent %s (agent %s) had begun this task, but its stored state is gone "+
		"(removed or moved out of the store), so it is not run again: what it did, and what it changed in the "+
		"workspace, is unknown. Look at the workspace before handing the task out again.", name, id)
	r.emit(Event{Type: EventWarning, Text: fmt.Sprintf("delegation to sub-agent %s: agent %s had begun and is no longer in the store; "+
		"its call gets a result saying so, and it is not run again (its changes may be in the workspace)", name, id)})
	return nativeResult{Output: text, IsError: true}
}

// vanished says why a tree stopped when its child's stored state went
// from under it while it ran.
func vanished(name, id, root string) string {
	return fmt.Sprintf(childStopPrefix+"%s (agent %s) stopped: its stored state vanished while it ran (its directory was removed "+
		"or moved aside), so it could not go on; put it back and `cairn resume %s` continues it, or resume without it: "+
		"the delegation then gets a result saying its sub-agent is gone, and what it changed is unknown", name, id, root)
}

// foreignChildError: the agent at a delegation's child id is not the one
// the delegation made (its lineage names another parent, call or name, or
// none: an agent made apart from the tree under that id). Its answer is
// not taken for the delegation's.
type foreignChildError struct {
	id, root string
	want     checkpoint.Parent
	got      *checkpoint.Parent
	// task is, of a child whose lineage is the delegation's, the other
	// task it was made with; earlier says it was made before the parent's
	// first run started.
	task    string
	earlier bool
}

func (e *foreignChildError) Error() string {
	if e.earlier {
		return fmt.Sprintf("agent %s is not the sub-agent this delegation made: its lineage is this delegation's (parent %s, call %s, name %s), "+
			"but it was made before agent %s's first run started, so an earlier agent of that id made it; it is left as it was and its answer "+
			"is not taken: take it out of the store, then `cairn resume %s` (the delegation then makes its sub-agent anew)",
			e.id, e.want.Agent, e.want.Call, e.want.Name, e.want.Agent, e.root)
	}
	if e.task != "" {
		return fmt.Sprintf("agent %s is not the sub-agent this delegation made: its lineage is this delegation's (parent %s, call %s, name %s), "+
			"but it was made for another task (%q), so an earlier agent of the id %s made it; it is left as it was and its answer is not taken: "+
			"take it out of the store, then `cairn resume %s` (the delegation then makes its sub-agent anew, for this task)",
			e.id, e.want.Agent, e.want.Call, e.want.Name, clip(e.task, 200), e.want.Agent, e.root)
	}
	got := "it has no parent"
	if e.got != nil {
		got = fmt.Sprintf("its lineage is parent %s, call %s, name %s", e.got.Agent, e.got.Call, e.got.Name)
	}
	return fmt.Sprintf("agent %s is not the sub-agent this delegation made (parent %s, call %s, name %s): %s, "+
		"so another run made it; it is left as it was and its answer is not taken: take it out of the store, "+
		"then `cairn resume %s` (the delegation then says its sub-agent is gone)", e.id, e.want.Agent, e.want.Call, e.want.Name, got, e.root)
}

// droppedInFlight refuses an agent file read again (ResumeOptions.Upgrade)
// that no longer declares the sub-agent of a delegation the interrupted
// round has in flight: its child may have begun, and changed the
// workspace, and the call would get an error result as if it had never
// run, its child left interrupted.
//
// # Errors
//
// ErrSubAgent, naming the sub-agent and the call.
func droppedInFlight(af *AgentFile, tail []checkpoint.Record) error {
	done := map[string]bool{}
	for _, t := range tail {
		if t.Type == checkpoint.RecResult {
			done[t.Call] = true
		}
	}
	for _, t := range tail {
		if t.Type != checkpoint.RecTurn || t.Message == nil {
			continue
		}
		for _, c := range t.Message.ToolCalls {
			var in struct{ Agent string }
			if c.Name != delegateName || done[c.ID] || json.Unmarshal([]byte(c.Input), &in) != nil {
				continue
			}
			if !slices.ContainsFunc(af.Agents, func(s SubAgent) bool { return s.Name == in.Agent }) {
				return fmt.Errorf("%w: %s no longer declares the sub-agent %q of the delegation %s in flight, "+
					"which the resume goes on with: put it back under agents:, or resume without --upgrade",
					ErrSubAgent, af.describe(), in.Agent, c.ID)
			}
		}
	}
	return nil
}
