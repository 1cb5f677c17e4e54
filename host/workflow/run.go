package workflow

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// Options says how to run a workflow.
type Options struct {
	// ID is a new workflow's id; empty: the flow's name and a random
	// suffix. Resume takes the id as its argument.
	ID string
	// Workspace overrides the flow's workspace (Run only: a resume keeps
	// the workspace the workflow started with).
	Workspace string
	// Parallel bounds the steps that run at once, overriding the flow's
	// max_parallel; zero keeps the flow's. A negative one is refused.
	Parallel int
	// OnStep receives each step's start and end. OnEvent receives every
	// event of every step's agent, the agent named in each. Both are
	// called from one goroutine at a time; either may be nil.
	OnStep  func(StepEvent)
	OnEvent host.EventFunc
	// OnWarning receives what the caller should know that is no step's
	// event: in Resume, that the workflow file changed on disk since the
	// workflow started, and that the run goes on with the one it started
	// with. It may be nil.
	OnWarning func(string)
	// AutoDeny denies the calls an approval rule puts to a person; without
	// it such a call pauses its step, and with it the workflow.
	AutoDeny bool
	// Limits raise, in Resume, the limits of the steps' agents it
	// continues (a step paused by its max_rounds, say): each one set
	// replaces the agent file's, as host.ResumeOptions.Limits does.
	Limits host.RunLimits
	// Retry names, in Resume, steps to make again that a resume does not
	// make again by itself, because what their earlier attempt did is
	// unknown: a step that had begun and whose agent's stored state is
	// gone (it is made anew), and a tool step whose call was interrupted
	// after it sent a request not safe to repeat (its agent makes the
	// call again, keeping the earlier attempt in its journal).
	Retry []string
}

// StepEvent is a step starting ("start"), being skipped because the
// journal has it ("skip"), or ending ("done", "paused", "failed").
type StepEvent struct {
	Type   string
	Step   string
	Kind   string
	Agent  string
	Output string
	Reason string
	// Resumed says the step's agent was interrupted and is resumed from
	// its own boundary.
	Resumed bool
}

// Result is how a workflow run ended.
type Result struct {
	ID     string
	Status checkpoint.Status
	Reason string
	// Stop is the step that stopped the workflow short of its end; nil
	// when it completed or ctx ended first.
	Stop *Stop
	// Stopped are every step that stopped short in this run (paused,
	// awaiting approval or failed), Stop first, then the others in the
	// order they stopped: steps that ran side by side may each wait for
	// a decision. The Reason names each.
	Stopped []Stop
	// Ran are the steps this run completed; Skipped those the journal
	// already had.
	Ran, Skipped []string
	Record       *checkpoint.Workflow
}

// Stop is the step that stopped a workflow, and what the caller needs to
// say how to go on.
type Stop struct {
	Step, Agent string
	// Status is how the step stopped, Reason why.
	Status checkpoint.Status
	Reason string
	// Calls are the calls of the step's agent that await a decision, when
	// it stopped awaiting approval; none when a call of a sub-agent of it
	// waits (the reason names that agent).
	Calls []string
	// Held, matching checkpoint.ErrLocked, says another process holds
	// the step's agent: the workflow is paused, not failed, and a resume
	// continues it once that process lets go.
	Held error
	// InFlow says the cause of a failure is in the workflow file, which
	// the workflow keeps as it started: a resume fails the same way, and
	// the workflow must be run anew from a fixed file.
	InFlow bool
	// Retry says what the step's last attempt did is unknown (its agent's
	// stored state is gone, or its call may have taken effect), so a
	// plain resume does not make it again: the reason says what to check,
	// and that Options.Retry (`cairn workflow resume --retry STEP`) makes
	// it again.
	Retry bool
}

// Errors a caller branches on.
var (
	// ErrNoWorkflows: the engine's store keeps no workflows.
	ErrNoWorkflows = errors.New("this store keeps no workflows")
	// ErrFinished: the workflow has completed every step; there is
	// nothing to resume.
	ErrFinished = errors.New("workflow has finished")
	// ErrRetry: Options.Retry names a step that is not one a resume
	// leaves alone (no step of the workflow, a completed one, or one a
	// resume continues by itself).
	ErrRetry = errors.New("no step to retry")
)

// Run starts a new workflow and runs it until every step has completed, a
// step pauses or fails, or ctx ends (which pauses the running steps at
// their boundaries). Each step is first checked for what it needs that
// can be seen without running it (its agent file, modules, tools and their
// grants, as its agent's start checks them, sub-agents, model script and
// workspace); the record is stored after that, before the first step
// starts.
//
// # Errors
//
// ErrFlow for a step that fails its check (nothing is stored),
// ErrNoWorkflows, checkpoint.ErrExists for an id that is taken, either by
// a workflow or by an agent that has a step's agent's id (an earlier run
// under the id left it: a new run does not take it over),
// checkpoint.ErrLocked, ErrParallel, and the store's own. How the steps
// went is in the Result.
func Run(ctx context.Context, eng *host.Engine, f *Flow, opts Options) (*Result, error) {
	ws, err := workflows(eng)
	if err != nil {
		return nil, err
	}
	if err := checkParallel(opts.Parallel); err != nil {
		return nil, err
	}
	if opts.ID == "" {
		opts.ID = f.Name + "-" + newID()
	}
	if err := checkID(f, opts.ID); err != nil {
		return nil, err
	}
	ws0, err := workspaceOf(f, opts.Workspace)
	if err != nil {
		return nil, err
	}
	if err := f.checkSteps(ws0, f.Steps); err != nil {
		return nil, err
	}
	lock, err := lockWorkflow(eng.Store(), opts.ID)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	if _, err := ws.Workflow(opts.ID); !errors.Is(err, checkpoint.ErrNotFound) {
		return nil, fmt.Errorf("workflow %s: %w: start this one under another id, or continue that one with workflow.Resume (`cairn workflow resume %s`)",
			opts.ID, errors.Join(checkpoint.ErrExists, err), opts.ID)
	}
	if err := checkNoAgents(eng.Store(), f, opts.ID); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	rec := &checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion, ID: opts.ID, Name: f.Name, Run: newID(),
		Flow: f.Source, Dir: f.Dir, File: f.File, Workspace: ws0, Started: now, Updated: now, Status: checkpoint.StatusRunning}
	if err := ws.PutWorkflow(rec); err != nil {
		return nil, err
	}
	return newRunner(eng, ws, f, rec, opts).run(ctx)
}

// Resume continues a workflow: the steps its journal has are skipped, an
// interrupted agent step is resumed from its agent's boundary, and the
// rest are dispatched; a step whose last attempt did what cannot be known
// (see Options.Retry) fails, saying so, unless opts.Retry names it. The
// steps it will start anew are checked first, as
// Run checks them, against the workflow file the workflow started with;
// then the record is written saying the workflow runs, so that a resume
// that is killed is shown interrupted, not as the run before it ended.
//
// # Errors
//
// ErrNoWorkflows, checkpoint.ErrNotFound for an unknown id,
// checkpoint.ErrFutureSchema for a record of a newer cairn,
// checkpoint.ErrCorrupt for a record that is damaged or holds another
// workflow, ErrFinished, checkpoint.ErrLocked, ErrFlow for a step to
// start that fails its check, ErrRetry, ErrParallel, and a stored flow
// that no longer parses; with each, nothing is changed.
func Resume(ctx context.Context, eng *host.Engine, id string, opts Options) (*Result, error) {
	ws, err := workflows(eng)
	if err != nil {
		return nil, err
	}
	if err := checkParallel(opts.Parallel); err != nil {
		return nil, err
	}
	if _, err := ws.Workflow(id); err != nil {
		return nil, err // refused before the lock is taken, so nothing is made
	}
	lock, err := lockWorkflow(eng.Store(), id)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	rec, err := ws.Workflow(id)
	if err != nil {
		return nil, err
	}
	if rec.Status == checkpoint.StatusDone {
		return nil, fmt.Errorf("workflow %s: %w: every step completed", id, ErrFinished)
	}
	f, err := Parse(rec.Flow, rec.Dir)
	if err != nil {
		return nil, fmt.Errorf("stored workflow file of %s: %w", id, err)
	}
	if why := flowChanged(rec); why != "" && opts.OnWarning != nil {
		opts.OnWarning(fmt.Sprintf("%s; resuming workflow %s with the one it started with (to run the new one, start it anew under another id: `cairn workflow run --id NEW %s`)",
			why, id, rec.File))
	}
	opts.ID = id
	r := newRunner(eng, ws, f, rec, opts)
	if err := r.checkRetry(); err != nil {
		return nil, fmt.Errorf("resume workflow %s: %w", id, err)
	}
	if err := r.checkUnstarted(); err != nil {
		return nil, fmt.Errorf("resume workflow %s: %w; a workflow runs the workflow file it started with: "+
			"fix or make what it names, where it names it, then resume it", id, err)
	}
	// As Run does before its first step: a resume killed before a step
	// completes leaves a record that says running, which Show and List
	// give as interrupted.
	rec.Status, rec.Reason, rec.Updated = checkpoint.StatusRunning, "", time.Now().UTC()
	if err := ws.PutWorkflow(rec); err != nil {
		return nil, fmt.Errorf("resume workflow %s: %w", id, err)
	}
	return r.run(ctx)
}

// flowChanged says how the workflow file rec started from differs on disk
// now from the one it keeps, in words for a warning; "" when it does not,
// or the record does not say where the file was. It is the workflow's
// counterpart of what a resumed agent says of its agent file.
func flowChanged(rec *checkpoint.Workflow) string {
	if rec.File == "" {
		return ""
	}
	now, err := os.ReadFile(rec.File)
	if err != nil {
		return fmt.Sprintf("the workflow file %s is gone (%v)", rec.File, err)
	}
	if !bytes.Equal(now, rec.Flow) {
		return fmt.Sprintf("the workflow file %s changed since the workflow started", rec.File)
	}
	return ""
}

// ErrParallel: Options.Parallel is negative.
var ErrParallel = errors.New("parallel must be 1 or more (0 keeps the workflow file's max_parallel)")

func checkParallel(n int) error {
	if n < 0 {
		return fmt.Errorf("%w: it is %d", ErrParallel, n)
	}
	return nil
}

// checkNoAgents refuses a new run of workflow id when the id of a step's
// agent names an agent that is there already: an earlier run under the
// id left it (its record since moved aside), or it was made apart from any
// workflow. The run would otherwise take it over as its step's agent and
// report what it had answered.
func checkNoAgents(store checkpoint.Store, f *Flow, id string) error {
	for _, s := range f.Steps {
		if a := StepAgent(id, s.Name); store.Exists(a) {
			return fmt.Errorf("workflow %s: step %s: agent %s %w, made by an earlier run under the id %s or apart from any workflow; "+
				"a new run does not take it over, and it is left as it was: %s, or run the workflow under another id (--id)",
				id, s.Name, a, checkpoint.ErrExists, id, removeAdvice(store, a))
		} else if err := checkNoSubAgents(store, a, "run it again, or run the workflow under another id (--id)"); err != nil {
			return fmt.Errorf("workflow %s: step %s: %w", id, s.Name, err)
		}
	}
	return nil
}

// removeAdvice says how to take agent, with the sub-agents under it, out
// of store by hand.
func removeAdvice(store checkpoint.Store, agent string) string {
	fs, ok := store.(*checkpoint.FileStore)
	if !ok {
		return "remove it and its sub-agents from the store (in PostgreSQL, their rows of cairn_agents, cairn_journal, cairn_past and cairn_events)"
	}
	dirs := []string{filepath.Join(fs.Dir(), "agents", agent)}
	subs, _ := filepath.Glob(filepath.Join(fs.Dir(), "agents", agent+".*"))
	paths := strings.Join(append(dirs, subs...), " ")
	return fmt.Sprintf("move it out of the store with its sub-agents, if it has any (`mv %s DIR`), or delete them (`rm -r %s`)", paths, paths)
}

// label is the correlation label of a workflow run's step agents: the
// workflow's id and its run's token, ID#RUN; for a workflow that a cairn
// writing record version 1 started, which has no token, its id alone.
func label(rec *checkpoint.Workflow) string {
	if rec.Run == "" {
		return rec.ID
	}
	return rec.ID + "#" + rec.Run
}

// lockWorkflow takes the store's lock of a workflow's id. A lock another
// process holds is a *lockedError, which names the workflow.
func lockWorkflow(store checkpoint.Store, id string) (checkpoint.Lock, error) {
	lock, err := store.Lock(id, checkpoint.ThisProcess("workflow"))
	if errors.Is(err, checkpoint.ErrLocked) {
		return nil, &lockedError{id: id, err: err}
	}
	return lock, err
}

// lockedError: another process holds a workflow's lock. It matches
// checkpoint.ErrLocked.
type lockedError struct {
	id  string
	err error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("workflow %q is run by %s; wait for it to end or stop it", e.id, heldBy(e.err))
}

func (e *lockedError) Unwrap() error { return e.err }

// StatusInterrupted is the status Show and List give a workflow whose
// record says it is running while no process holds its lock: the process
// that ran it was stopped (a kill, a crash, a lost machine) before it could
// record how it ended. Resume continues it.
const StatusInterrupted checkpoint.Status = "interrupted"

// Show reads a workflow's record (its status StatusInterrupted when no
// process runs the workflow its record says is running).
func Show(store checkpoint.Store, id string) (*checkpoint.Workflow, error) {
	ws, ok := store.(checkpoint.Workflows)
	if !ok {
		return nil, ErrNoWorkflows
	}
	rec, err := ws.Workflow(id)
	if err != nil {
		return nil, err
	}
	markInterrupted(store, rec)
	return rec, nil
}

// markInterrupted gives rec StatusInterrupted when it says it is running
// and no process holds its lock. It asks the store (checkpoint.LockQuery)
// rather than taking the lock, as a command that only reads must: in
// PostgreSQL a take raises the lease's epoch. A store that cannot be
// asked has its lock taken and let go at once.
func markInterrupted(store checkpoint.Store, rec *checkpoint.Workflow) {
	if rec.Status != checkpoint.StatusRunning {
		return
	}
	if q, ok := store.(checkpoint.LockQuery); ok {
		if held, err := q.Locked(rec.ID); err == nil && !held {
			rec.Status = StatusInterrupted
		}
		return // held (running), or unknown: as the record says
	}
	lock, err := store.Lock(rec.ID, checkpoint.ThisProcess("workflow status"))
	if err != nil {
		return // held (running), or unknown: as the record says
	}
	lock.Unlock()
	rec.Status = StatusInterrupted
}

// List reads every workflow's record, as Show does; one that cannot be
// read is in errs by its id.
func List(store checkpoint.Store) (recs []*checkpoint.Workflow, errs map[string]error, err error) {
	ws, ok := store.(checkpoint.Workflows)
	if !ok {
		return nil, nil, ErrNoWorkflows
	}
	ids, err := ws.WorkflowIDs()
	if err != nil {
		return nil, nil, err
	}
	errs = map[string]error{}
	for _, id := range ids {
		rec, err := ws.Workflow(id)
		if err != nil {
			errs[id] = err
			continue
		}
		markInterrupted(store, rec)
		recs = append(recs, rec)
	}
	return recs, errs, nil
}

// checkID refuses a workflow id that is not a valid id, or that makes a
// step's agent id too long.
func checkID(f *Flow, id string) error {
	if err := checkpoint.CheckID(id); err != nil {
		return fmt.Errorf("workflow id: %w", err)
	}
	for _, s := range f.Steps {
		if err := checkpoint.CheckID(StepAgent(id, s.Name)); err != nil {
			return fmt.Errorf("workflow id %q is too long for the id of step %s's agent: %w", id, s.Name, err)
		}
	}
	return nil
}

// workspaceOf is the workflow's workspace, absolute, so a resume from
// another directory finds it; empty when neither the caller nor the flow
// names one.
func workspaceOf(f *Flow, override string) (string, error) {
	ws := override
	if ws == "" {
		ws = f.Path(f.Workspace)
	}
	if ws == "" {
		return "", nil
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", ws, err)
	}
	return abs, nil
}

func workflows(eng *host.Engine) (checkpoint.Workflows, error) {
	ws, ok := eng.Store().(checkpoint.Workflows)
	if !ok {
		return nil, ErrNoWorkflows
	}
	return ws, nil
}

// StepAgent is the id of the agent that runs a step of a workflow.
func StepAgent(workflow, step string) string { return workflow + "." + step }

// newID returns 12 random hex digits.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// runner drives one workflow run.
type runner struct {
	eng  *host.Engine
	ws   checkpoint.Workflows
	flow *Flow
	opts Options

	mu    sync.Mutex // guards the callbacks
	recMu sync.Mutex // guards rec, its writes and lost
	rec   *checkpoint.Workflow
	// lost is the refusal of a write of rec because another process took
	// the workflow over (checkpoint.ErrLockLost); stop ends the run's
	// steps with it.
	lost    error
	stop    context.CancelCauseFunc
	outputs map[string]string
	ran     []string
	skipped []string
}

func newRunner(eng *host.Engine, ws checkpoint.Workflows, f *Flow, rec *checkpoint.Workflow, opts Options) *runner {
	r := &runner{eng: eng, ws: ws, flow: f, opts: opts, rec: rec, outputs: map[string]string{}, stop: func(error) {}}
	for _, s := range rec.Steps {
		r.outputs[s.Name] = s.Output
	}
	return r
}

// retrying says whether the caller asked to make the step again.
func (r *runner) retrying(step string) bool {
	for _, s := range r.opts.Retry {
		if s == step {
			return true
		}
	}
	return false
}

// checkRetry refuses a step to retry that is no step, has completed, or
// is one a resume makes or continues by itself.
func (r *runner) checkRetry() error {
	for _, name := range r.opts.Retry {
		s, ok := r.flow.step(name)
		switch {
		case !ok:
			return fmt.Errorf("%w: %s is not a step of the workflow", ErrRetry, name)
		case r.completed(name):
			return fmt.Errorf("%w: step %s completed, and a completed step is never made again", ErrRetry, name)
		}
		j := r.prepare(s)
		j.retry = false
		if j.blocked(r.rec.ID) == "" {
			return fmt.Errorf("%w: step %s is not one whose last attempt is unknown: `cairn workflow resume %s` makes or continues it without --retry",
				ErrRetry, name, r.rec.ID)
		}
		if j.gone {
			if err := checkNoSubAgents(r.eng.Store(), j.agent, fmt.Sprintf("`cairn workflow resume --retry %s %s`", name, r.rec.ID)); err != nil {
				return fmt.Errorf("step %s: %w", name, err)
			}
		}
	}
	return nil
}

// checkNoSubAgents refuses to make agent anew while sub-agents that an
// earlier agent of its id made are in the store: a delegation's sub-agent
// is named by its parent's id and its call's, which the new agent's calls
// take again, and the new agent's delegation would take the earlier
// sub-agent's answer for its own. then is the command that goes on once
// they are out.
func checkNoSubAgents(store checkpoint.Store, agent, then string) error {
	subs, err := host.Children(context.Background(), store, agent)
	if err != nil || len(subs) == 0 {
		return err
	}
	ids := make([]string, len(subs))
	for i, s := range subs {
		ids[i] = s.ID
	}
	return fmt.Errorf("agent %s is to be made anew, but sub-agents that an earlier agent of that id made are in the store (%s: %w), "+
		"and its delegations would take their answers for their own; they are left as they were: %s, then %s",
		agent, strings.Join(ids, ", "), checkpoint.ErrExists, subAgentsAdvice(store, ids), then)
}

// subAgentsAdvice says how to take the sub-agents ids, with those under
// them, out of store by hand.
func subAgentsAdvice(store checkpoint.Store, ids []string) string {
	fs, ok := store.(*checkpoint.FileStore)
	if !ok {
		return "remove them and the sub-agents under them from the store (in PostgreSQL, their rows of cairn_agents, cairn_journal, cairn_past and cairn_events)"
	}
	var paths []string
	for _, id := range ids {
		paths = append(paths, filepath.Join(fs.Dir(), "agents", id))
		subs, _ := filepath.Glob(filepath.Join(fs.Dir(), "agents", id+".*"))
		paths = append(paths, subs...)
	}
	all := strings.Join(paths, " ")
	return fmt.Sprintf("move them out of the store (`mv %s DIR`), or delete them (`rm -r %s`)", all, all)
}

// completed says whether the journal has the step.
func (r *runner) completed(step string) bool {
	_, ok := r.outputs[step]
	return ok
}

// begun says whether the step is marked begun in the record.
func (r *runner) begun(step string) bool {
	r.recMu.Lock()
	defer r.recMu.Unlock()
	return r.rec.HasBegun(step)
}

// put writes the record; the caller holds recMu. A write refused because
// another process took the workflow over (its lease expired or was
// stolen: checkpoint.ErrLockLost) is the last one this run tries: no step
// starts after it, the running ones stop at their boundaries, and the run
// ends with it, writing nothing more of the workflow.
func (r *runner) put() error {
	if r.lost != nil {
		return r.lost
	}
	err := r.ws.PutWorkflow(r.rec)
	if errors.Is(err, checkpoint.ErrLockLost) {
		r.lost = err
		r.stop(err)
	}
	return err
}

// setBegun marks the step begun in the record, or takes the mark back,
// durably.
func (r *runner) setBegun(step string, begun bool) error {
	r.recMu.Lock()
	defer r.recMu.Unlock()
	was := r.rec.Begun
	if begun {
		r.rec.Begun = append(slices.Clip(was), step)
	} else {
		r.rec.Begun = slices.DeleteFunc(slices.Clone(was), func(s string) bool { return s == step })
	}
	r.rec.Updated = time.Now().UTC()
	if err := r.put(); err != nil {
		r.rec.Begun = was
		return fmt.Errorf("mark step %s begun (%v): %w", step, begun, err)
	}
	return nil
}
