package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

// Strategy is what resume does with the round a crash interrupted.
type Strategy string

// The strategies of resume.
const (
	// StrategySeal keeps the calls that finished, gives each call that was
	// in flight an error result saying so, and continues.
	StrategySeal Strategy = "seal"
	// StrategyReplay drops the interrupted round and asks the model again
	// from the boundary; a round that cannot be run twice (it changed the
	// workspace, delegated, sent a request not safe to repeat or called
	// a tool outside the sandbox) is kept as StrategySeal keeps it.
	StrategyReplay Strategy = "replay"
	// StrategyManual reports what it found and changes nothing.
	StrategyManual Strategy = "manual"
)

// ParseStrategy reads a strategy's name.
func ParseStrategy(s string) (Strategy, error) {
	switch st := Strategy(s); st {
	case StrategySeal, StrategyReplay, StrategyManual:
		return st, nil
	case "":
		return StrategySeal, nil
	}
	return "", fmt.Errorf("strategy %q: want seal, replay or manual", s)
}

// ResumeOptions says which agent to resume and how.
type ResumeOptions struct {
	ID       string
	Strategy Strategy
	// Upgrade rebuilds the agent from its agent file as it is on disk now,
	// instead of from what the store kept when it started. A sub-agent's
	// file (or that of an agent made from one's definition, as a
	// workflow's delegation step) is checked against the agent file above
	// it as its delegation was: one that asks for more is refused with
	// ErrSubAgent, and nothing is journaled.
	Upgrade bool
	// UpgradeAdvice, when set, says in the warning that the agent file
	// changed since the agent started how to take up the new one, in the
	// place of "--upgrade uses the new one": for a caller whose user has
	// no --upgrade to give (a workflow's resume of its steps' agents).
	UpgradeAdvice string
	// Model overrides the agent's model.
	Model   *model.Spec
	OnEvent EventFunc
	// Limits raise the agent's run limits for this run: each one set
	// replaces the agent file's.
	Limits RunLimits
	// Approver and AutoDeny are as in RunOptions; they also answer the
	// calls that were waiting for approval when the agent stopped.
	Approver Approver
	AutoDeny bool
	// Above, for an agent made from a sub-agent's definition in another
	// agent file (a workflow's delegation step) whose stored definition
	// does not keep that file (checkpoint.Definition.Above: one a cairn
	// that did not keep it made), is that agent file: its approval rules
	// bind the agent's calls, and its sandbox limits are the ones the
	// agent leaves out, as they do a delegation's sub-agent. The file a
	// definition keeps is used over it.
	Above *AgentFile

	sub *subRun // a delegation's, for the run of its sub-agent
	// Workspace, when set, is where the agent's workspace is now: a
	// missing or empty directory receives the store's copy of it at the
	// boundary; one that holds a workspace is compared with that copy,
	// and refused with a *WorkspaceDiffError if they differ, unless
	// TakeStoreWorkspace makes it the store's copy.
	Workspace          string
	TakeStoreWorkspace bool
	// Steal takes the agent from a holder whose lease has not expired
	// (a store with leases only: pgstore), fencing it.
	Steal bool
}

// resumeReport is what resume found. It is also the agent_resumed event.
type resumeReport struct {
	Boundary int
	// Finished are the calls of the interrupted round that had a result:
	// they are kept and never run again.
	Finished []string
	Sealed   []Seal
	// Awaiting are the calls that wait for a person's decision, or have
	// one and have not run yet.
	Awaiting []string
	// Applied are the finished calls whose changes the crash left
	// unapplied and resume applied.
	Applied []string
	// Dropped are the calls of the round that --strategy replay drops:
	// their results, if any, are thrown away and the model is asked again.
	// Replay drops a round only if none of its calls changed the workspace
	// or has a change to make.
	Dropped []string
	// Resumed are the calls in flight that resume runs rather than seals,
	// because their tool keeps what they had done (a delegation resumes
	// its sub-agent; see nativeResumer).
	Resumed []string
	// last is the newest phase record of each call of the round;
	// tailCalls are the round's calls in the order the model asked.
	last      map[string]checkpoint.Record
	tailCalls []string
}

// openToResume recovers the agent for Resume, under its lock, clearing a
// pause asked of it. Under StrategyManual it only reads: the store's files
// are left exactly as they are (not even a torn tail is cut), and the log
// refuses every write.
func (e *Engine) openToResume(opts ResumeOptions) (*checkpoint.Recovered, checkpoint.Log, error) {
	if opts.Strategy == StrategyManual {
		rec, err := e.store.Read(opts.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("resume: %w", err)
		}
		return rec, readOnlyLog{rec.State}, nil
	}
	rec, log, err := e.store.Open(opts.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("resume: %w", err) // the store's error names the agent
	}
	if err := e.clearPause(opts.ID); err != nil {
		log.Close()
		return nil, nil, err
	}
	return rec, log, nil
}

// readOnlyLog is the log of a manual resume, which changes nothing.
type readOnlyLog struct{ st *checkpoint.State }

var errManual = errors.New("resume --strategy manual changes nothing")

func (readOnlyLog) Append(...checkpoint.Record) error          { return errManual }
func (readOnlyLog) Commit(...checkpoint.Record) (int64, error) { return 0, errManual }
func (readOnlyLog) Sync() error                                { return nil }
func (l readOnlyLog) State() *checkpoint.State                 { return l.st }
func (readOnlyLog) Close() error                               { return nil }

// Resume brings an agent back at its last boundary and continues it. A run
// that ended cleanly is not run again: its Result says so. A paused run
// continues where it paused.
//
// # Errors
//
// checkpoint.ErrNotFound for an unknown agent, checkpoint.ErrLocked,
// checkpoint.ErrFutureSchema and checkpoint.ErrCorrupt from the store,
// ErrDefinition when a module or the agent file is missing from the store.
func (e *Engine) Resume(ctx context.Context, opts ResumeOptions) (*Result, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if opts.Strategy == "" {
		opts.Strategy = StrategySeal
	}
	if opts.Strategy == StrategyManual && opts.Upgrade {
		// Upgrading journals the agent file as it is now.
		return nil, fmt.Errorf("resume agent %q: the manual strategy changes nothing, and Upgrade would: give one of them", opts.ID)
	}
	if err := e.checkBeforeLock(ctx, opts); err != nil {
		return nil, err
	}
	runID := "run-" + newID()
	lock, err := e.lockToResume(opts, runID)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	rec, log, err := e.openToResume(opts)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	if err := e.placeWorkspace(rec, opts, log); err != nil {
		return nil, err
	}
	r, err := e.rebuildRun(ctx, rec, opts, runID, log)
	if err != nil {
		return nil, err
	}
	defer func() { r.release() }()
	r.adopt(opts.sub)
	r.spent = tailSpend(rec.Tail)
	loaded := Event{Type: EventCheckpointLoaded, Round: rec.State.Round, Messages: len(rec.State.Messages),
		Bytes: rec.JournalBytes + rec.SnapshotBytes}
	if !rec.Interrupted() && rec.State.Status == checkpoint.StatusDone {
		// Told to the caller only: no run happens, so the agent's history
		// gets no lines of one.
		r.emit(loaded)
		return r.nothingToDo(rec), nil
	}
	if opts.Strategy != StrategyManual {
		if err := r.keepHistory(e.store); err != nil {
			return nil, err
		}
	}
	r.emit(loaded)
	report := r.inspect(rec)
	if opts.Strategy == StrategyManual {
		r.emit(report.event(opts.Strategy))
		reason := "manual: reported, nothing changed"
		if r.refusedAlone != nil {
			reason += fmt.Sprintf("; a resume that runs it is refused: %v", r.refusedAlone)
		}
		return &Result{Agent: r.agentID, Status: StatusPaused, Rounds: rec.State.Round, Reason: reason}, nil
	}
	last := rec.State.LastRun()
	info := checkpoint.RunInfo{ID: runID, Strategy: string(opts.Strategy)}
	if last != nil {
		info.ResumedFrom = last.ID
	}
	// An agent stopped before its first run journaled the prompt it was
	// made with is given that prompt now, as the run would have.
	if err := r.begin(info, rec.State.Prompt); err != nil {
		return nil, err
	}
	r.holdLater() // what finishKept applies is told after agent_resumed
	if report.Applied, err = r.finishKept(rec); err != nil {
		r.laterEvents(Event{})
		return r.end(StatusFailed, err.Error())
	}
	strategy := opts.Strategy
	if strategy == StrategyReplay && (madeChanges(rec.Tail) || delegated(rec.Tail)) {
		// Replaying would run again calls whose changes are made: keep
		// the round instead, so each change is made once.
		strategy = StrategySeal
		r.emit(Event{Type: EventWarning, Text: fmt.Sprintf("round %d changed the workspace or the agent's memory before the stop: its finished calls are kept, not replayed", report.Boundary+1)})
	}
	if strategy == StrategyReplay && r.tools.calledUnsandboxed(rec.Tail) {
		strategy = StrategySeal
		r.emit(Event{Type: EventWarning, Text: fmt.Sprintf("round %d called an MCP server's tool, which runs outside the sandbox, before the stop: it is kept and its calls in flight sealed, not replayed", report.Boundary+1)})
	}
	if strategy == StrategyReplay && sentMutating(rec.Tail) {
		strategy = StrategySeal
		r.emit(Event{Type: EventWarning, Text: fmt.Sprintf("round %d sent requests that may have changed something remote (POST, PUT, PATCH, DELETE) before the stop: it is kept and its calls in flight sealed, not replayed", report.Boundary+1)})
	}
	if strategy == StrategyReplay {
		report = report.drop()
	}
	r.laterEvents(report.event(opts.Strategy))
	// What the stop left staged is applied now or never will be.
	r.discardStaging(rec.State.Round + 1)
	if err := r.settle(ctx, rec, report, strategy); err != nil {
		if status, reason, ok := stopped(ctx, err); ok {
			return r.end(status, reason)
		}
		return nil, err
	}
	if text, ok := r.answered(); ok {
		// The stop came after the model's final answer: the task is done,
		// and asking the model again would take a round it never asked for.
		r.final = text
		return r.end(StatusDone, "")
	}
	if r.callerDriven {
		return r.end(StatusPaused, fmt.Sprintf("its turns come from an MCP client: `cairn mcp --id %s` goes on", r.agentID))
	}
	if len(r.state().Messages) == 0 && len(r.pending) == 0 && !r.scripted {
		// A request of no messages is one no provider takes (a script,
		// as a tool step's, plays its turns without one).
		return r.end(StatusPaused, fmt.Sprintf("nothing to ask the model: the agent has no conversation yet; give it a prompt with `cairn run --id %s PROMPT`", r.agentID))
	}
	if err := r.startWatching(ctx); err != nil {
		// A stop (Ctrl-C, a pause, serve's close) while the run starts
		// ends it as a stop does, not as a failure.
		if status, reason, ok := stopped(ctx, err); ok {
			return r.end(status, reason)
		}
		return r.end(StatusFailed, err.Error())
	}
	return r.end(r.loop(ctx))
}

// checkBeforeLock makes, before the agent's lock is taken, the checks
// that can refuse the resume, so that a refusal changes nothing: not the
// lease (taking one raises its epoch), and above all, with Steal, not the
// run of a live holder, which the steal would fence. It reads without the
// lock: the agent, and with Steal its definition (with Upgrade, its agent
// file as it is now, checked as upgradeFile checks it) and the workspace
// that ResumeOptions.Workspace would get. Under the lock placeWorkspace
// checks the workspace again, since the holder may have gone on meanwhile.
//
// A store whose locks are not leases (a directory's flock) is not read
// here: taking its lock changes nothing that outlives the resume, and
// openToResume reads the agent under it and refuses it with the same
// error. Only an agent that is not there is refused here, since locking
// one makes its directory.
func (e *Engine) checkBeforeLock(ctx context.Context, opts ResumeOptions) error {
	_, leases := e.store.(Stealer)
	if opts.Steal && !leases {
		return nil // lockToResume refuses it
	}
	if !leases && e.store.Exists(opts.ID) {
		return nil
	}
	rec, err := e.store.Read(opts.ID)
	if err != nil {
		return fmt.Errorf("resume: %w", err) // the store's error names the agent
	}
	if !opts.Steal {
		return nil
	}
	if opts.Upgrade {
		if _, err := e.upgradeFile(ctx, rec.State, opts); err != nil {
			return err
		}
	} else if _, _, err := e.rebuild(rec.State.Definition); err != nil {
		return fmt.Errorf("resume agent %q: %w", opts.ID, err)
	}
	if opts.Workspace == "" || opts.Strategy == StrategyManual {
		return nil
	}
	return e.checkWorkspace(rec, opts)
}

// checkWorkspace refuses, changing nothing, a resume whose workspace
// placeWorkspace would refuse: a sub-agent, a round that had begun
// delegations, a store that lacks what the boundary is
// rebuilt from, or a directory that holds a workspace other than the
// store's (unless TakeStoreWorkspace). A boundary whose past a crash lost
// is left to placeWorkspace, which repairs it first.
func (e *Engine) checkWorkspace(rec *checkpoint.Recovered, opts ResumeOptions) error {
	if err := movesWithItsTree(rec, opts); err != nil {
		return err
	}
	if err := e.boundaryWritesKept(rec.State); err != nil {
		return fmt.Errorf("resume agent %q in %s: %w", opts.ID, opts.Workspace, err)
	}
	dir, err := filepath.Abs(opts.Workspace)
	if err != nil {
		return err
	}
	m, err := e.workspaceAt(rec.State, rec.State.Round)
	if errors.Is(err, checkpoint.ErrNoPast) && e.pastToRepair(rec.State) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("resume agent %q in %s: %w", opts.ID, dir, err)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 || opts.TakeStoreWorkspace {
		return nil
	}
	m = checkpoint.ApplyChanges(m, appliedInTail(rec.Tail))
	diffs, err := reconcile(m, settledInTail(rec.Tail), dir)
	if err != nil {
		return fmt.Errorf("resume agent %q: compare %s with the store: %w", opts.ID, dir, err)
	}
	if len(diffs) > 0 {
		return &WorkspaceDiffError{Agent: opts.ID, Dir: dir, Round: rec.State.Round, Diffs: diffs}
	}
	return nil
}

// pastToRepair says whether repairPast would keep the boundary's past: a
// crash lost it, and the past of the round before is there.
func (e *Engine) pastToRepair(st *checkpoint.State) bool {
	tl := e.timeline()
	if tl == nil || st.Round == 0 || roundDelegated(st) {
		return false
	}
	newest, ok, err := tl.NewestPast(st.Agent)
	return err == nil && ok && newest.Round == st.Round-1
}

// rebuildRun makes the run from the agent's stored definition.
func (e *Engine) rebuildRun(ctx context.Context, rec *checkpoint.Recovered, opts ResumeOptions,
	runID string, log checkpoint.Log) (*run, error) {
	def := rec.State.Definition
	var af *AgentFile
	var mods []toolModule
	var err error
	if opts.Upgrade {
		if af, err = e.upgradeFile(ctx, rec.State, opts); err != nil {
			return nil, err // it names the agent
		}
		if err = droppedInFlight(af, rec.Tail); err != nil {
			return nil, fmt.Errorf("resume agent %q with --upgrade: %w", opts.ID, err)
		}
		mods, err = e.upgrade(af, def, log)
	} else if af, mods, err = e.rebuild(def); err == nil && opts.Strategy != StrategyManual {
		// A run that writes the agent stores the modules a crash kept
		// from the store; manual reports and changes nothing.
		err = e.storeRebuilt(def, mods)
	}
	if err == nil {
		var delegating *AgentFile
		if opts.sub != nil {
			delegating = opts.sub.above
		}
		err = e.withAncestry(ctx, af, rec.State, delegating, opts.Above)
	}
	var unkept unkeptError
	var refused error
	if opts.Strategy == StrategyManual && errors.As(err, &unkept) {
		// Manual runs nothing, so no call meets the rules that are not
		// kept; its result says that a resume that runs is refused.
		refused, err = err, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resume agent %q: %w", opts.ID, err)
	}
	af.Limits = af.Limits.raise(opts.Limits)
	if rec.State.Parent == nil {
		// The budgets of the agent files kept above a workflow's
		// delegation step bound its tree alone: its resume raises them
		// as a top-level agent's (see fileTrees).
		for p := af.parent; p != nil; p = p.parent {
			p.Limits = p.Limits.raise(opts.Limits)
		}
	}
	spec, caller := opts.Model, opts.Model == nil && callerTurns(af.Model)
	if caller {
		spec = &model.Spec{Provider: clientTurns.Provider, ScriptData: clientTurns.ScriptData}
	}
	servers := af.MCP
	if opts.Strategy == StrategyManual {
		// Manual runs nothing, not even the agent's MCP servers: its
		// report is the journal's, not a server's, whether the server
		// starts or not, and whatever limits bind it (unknown of an agent
		// whose parent file is not kept).
		af.MCP = nil
	}
	r, err := e.newRun(ctx, af, mods, spec, def.Workspace, opts.ID, runID, log)
	af.MCP = servers
	if err != nil {
		return nil, fmt.Errorf("resume agent %q: %w", opts.ID, err)
	}
	if opts.Strategy == StrategyManual {
		r.tools.unstarted = len(servers) > 0
	}
	r.onEvent, r.approver, r.autoDeny, r.callerDriven = opts.OnEvent, opts.Approver, opts.AutoDeny, caller
	if why := e.changedSince(def, opts.UpgradeAdvice); why != "" && !opts.Upgrade {
		r.emit(Event{Type: EventWarning, Text: why})
	}
	r.refusedAlone = refused
	// Said now, as a resume with nothing left to run says nothing after.
	r.warnOfModules()
	return r, nil
}

// upgradeFile reads the agent file of the agent st again, as Upgrade does,
// and checks it against the agent file above it, if any, as its
// delegation was checked (see readmit), before anything is journaled.
//
// # Errors
//
// Those of reading the file; ErrSubAgent for one that asks for more than
// its parent's; a sub-agent defined inline in its parent's agent file has
// no file of its own to read.
func (e *Engine) upgradeFile(ctx context.Context, st *checkpoint.State, opts ResumeOptions) (*AgentFile, error) {
	if st.Definition.AgentPath == "" {
		// An inline sub-agent's definition is a part of its parent's file.
		return nil, fmt.Errorf("resume agent %q with --upgrade: it has no agent file of its own to read again (a sub-agent defined inline in its parent's agent file); "+
			"resume it without --upgrade, or give it a file of its own (agents: [{name: …, file: FILE}]) and delegate to it anew", opts.ID)
	}
	af, err := LoadAgentFile(st.Definition.AgentPath)
	if err == nil {
		err = e.readmit(ctx, af, st, opts.Above)
	}
	if err != nil {
		return nil, fmt.Errorf("resume agent %q: %w", opts.ID, err)
	}
	return af, nil
}

// upgrade stores the agent file as it is now and journals the new definition.
func (e *Engine) upgrade(af *AgentFile, old checkpoint.Definition, log checkpoint.Log) ([]toolModule, error) {
	mods, err := loadModules(af)
	if err != nil {
		return nil, err
	}
	def, err := e.define(af, mods, old.Workspace)
	if err != nil {
		return nil, err
	}
	def.Above = old.Above // what the new file was checked against (readmit)
	return mods, log.Append(checkpoint.Record{Type: checkpoint.RecDefine, Time: now(), Definition: &def})
}

func (r *run) nothingToDo(rec *checkpoint.Recovered) *Result {
	st := rec.State
	reason := "the agent's last run ended cleanly; there is nothing to resume (give it a new prompt with `cairn run --id`)"
	r.emit(Event{Type: EventRunEnd, Status: StatusDone, Reason: reason, Round: st.Round, Usage: &st.Usage})
	return &Result{Agent: r.agentID, Status: StatusDone, Reason: reason, Rounds: st.Round, Usage: st.Usage,
		ToolCalls: st.ToolCalls}
}

// settle finishes or drops the interrupted round as the strategy says.
func (r *run) settle(ctx context.Context, rec *checkpoint.Recovered, report resumeReport, s Strategy) error {
	turn, users := tailTurn(rec.Tail)
	if s == StrategyReplay {
		if len(rec.Tail) > 0 {
			// The dropped turn's tokens were spent: the abort counts them.
			round := rec.State.Round + 1
			if _, err := r.log.Commit(checkpoint.Record{Type: checkpoint.RecAbort, Time: now(), Round: round,
				Reason: "replayed by resume", Usage: tailUsage(rec.Tail)}); err != nil {
				return err
			}
			// Its spend is in the state now: a tree made for the turn
			// replayed must not count it again.
			r.spent = conversation.Usage{}
		}
		// The prompt is given again; a note of files changed outside the
		// agent is not: the files are looked at again as the run starts,
		// and what changed is told then.
		for _, m := range users {
			if m.Note {
				continue
			}
			if err := r.prompt(m.Text); err != nil {
				return err
			}
		}
		return nil
	}
	// Journaled already: the round's commit keeps them, and its request
	// sends them all, the prompt and the notes after it.
	r.pending = append(r.pending, users...)
	r.learnTold(rec.Tail)
	if turn == nil {
		return nil // the model had not answered: ask it, with the prompt kept
	}
	round := rec.State.Round + 1
	var recs []checkpoint.Record
	for _, s := range report.Sealed {
		if s.Earlier {
			continue // its result is journaled already
		}
		recs = append(recs, checkpoint.Record{Type: checkpoint.RecResult, Time: now(), Round: round,
			Call: s.Call, Tool: s.Tool, Result: &checkpoint.Result{Output: s.message(), IsError: true, Sealed: true,
				EffectsUnknown: s.Effects == EffectsUnknown, Net: s.exchanges}})
	}
	if err := r.log.Append(recs...); err != nil {
		return err
	}
	return r.finishRound(ctx, round, callsNamed(turn.ToolCalls, append(report.Awaiting, report.Resumed...)), report.last)
}

// answered reports whether the conversation at the boundary ends with the
// model's final answer (a turn with no calls) and nothing waits for a
// reply, and returns the answer. A run killed after that turn was
// journaled, before its end was, leaves such a boundary behind: the answer
// ended the task, and only the record saying so is missing.
func (r *run) answered() (string, bool) {
	msgs := r.state().Messages
	if len(r.pending) > 0 || len(msgs) == 0 {
		return "", false
	}
	last := msgs[len(msgs)-1]
	return last.Text, last.Role == conversation.RoleAssistant && len(last.ToolCalls) == 0
}

// callsNamed picks the calls whose ids are listed.
func callsNamed(calls []conversation.ToolCall, ids []string) []conversation.ToolCall {
	var out []conversation.ToolCall
	for _, c := range calls {
		if slices.Contains(ids, c.ID) {
			out = append(out, c)
		}
	}
	return out
}

// event is the agent_resumed event of a report.
func (rep resumeReport) event(s Strategy) Event {
	return Event{Type: EventAgentResumed, Strategy: string(s), Round: rep.Boundary, Sealed: rep.Sealed,
		Finished: rep.Finished, Awaiting: rep.Awaiting, Applied: rep.Applied, Dropped: rep.Dropped, Resumed: rep.Resumed}
}

// drop is the report of a round that replay drops: every call of it is
// dropped, whether it had finished, was in flight or waited for a person.
func (rep resumeReport) drop() resumeReport {
	order := map[string]int{}
	for i, t := range rep.tailCalls {
		order[t] = i
	}
	dropped := append([]string(nil), rep.Finished...)
	for _, s := range rep.Sealed {
		dropped = append(dropped, s.Call)
	}
	dropped = append(append(dropped, rep.Awaiting...), rep.Resumed...)
	sort.SliceStable(dropped, func(i, j int) bool { return order[dropped[i]] < order[dropped[j]] })
	rep.Dropped, rep.Finished, rep.Sealed, rep.Awaiting, rep.Resumed = dropped, nil, nil, nil, nil
	return rep
}

// tailTurn finds the model's turn and the messages before it (the
// person's prompt, cairn's notes of files changed outside the agent), in
// order, in an interrupted round.
func tailTurn(tail []checkpoint.Record) (turn *conversation.Message, users []conversation.Message) {
	for _, rec := range tail {
		switch rec.Type {
		case checkpoint.RecTurn:
			turn = rec.Message
		case checkpoint.RecUser:
			users = append(users, *rec.Message)
		}
	}
	return turn, users
}

// tailUsage is what the model's turn of an interrupted round cost, or nil.
func tailUsage(tail []checkpoint.Record) *conversation.Usage {
	for _, rec := range tail {
		if rec.Type == checkpoint.RecTurn && rec.Usage != nil {
			u := *rec.Usage
			return &u
		}
	}
	return nil
}

// tailSpend is what an interrupted round has cost so far: its model turn
// and the calls that finished (a delegation's result carries its
// sub-agent's usage).
func tailSpend(tail []checkpoint.Record) conversation.Usage {
	var u conversation.Usage
	if t := tailUsage(tail); t != nil {
		u = *t
	}
	for _, k := range keptCalls(tail) {
		if res := k.result.Result; res != nil && res.Usage != nil {
			u = u.Add(*res.Usage)
		}
	}
	return u
}

// calledUnsandboxed reports whether an interrupted round's tail holds a
// call of a tool outside the sandbox that started (or finished): what it
// did was not staged, so replaying the round would do it again.
func (ts *toolset) calledUnsandboxed(tail []checkpoint.Record) bool {
	for _, t := range tail {
		started := t.Type == checkpoint.RecResult || t.Type == checkpoint.RecPhase && t.Phase == checkpoint.PhaseExecuting
		if started && ts.unsandboxed(t.Tool) {
			return true
		}
	}
	return false
}

// madeChanges reports whether any call of an interrupted round has
// journaled changes (applied before the stop, or by resume): to the
// workspace, or a native tool's to what the agent keeps beyond it (a
// remembered or forgotten fact).
func madeChanges(tail []checkpoint.Record) bool {
	for _, t := range tail {
		if t.Type == checkpoint.RecResult && (len(t.Result.Effects) > 0 || len(t.Result.Native) > 0) {
			return true
		}
	}
	return false
}
