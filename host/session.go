package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

// A Session is an agent driven one call at a time by a caller outside the
// loop, such as an MCP client: each Call is one round of the agent whose
// model turn is the caller's request. The call runs exactly as a call the
// model asked for: a fresh instance of its module, its own overlay of the
// workspace, the approval rules, its effects applied only after its
// result is journaled, the round committed. So `cairn show`, `log`,
// `events`, `diff` and `undo` work on a session's agent, and a crash
// mid-call leaves an interrupted round that the next session of the agent
// seals. (`cairn resume` seals it too; it then asks the agent file's model
// to go on, unless that model is a session's, the script provider with no
// script, when it stops: see callerTurns.)
//
// A Session holds its agent's lock until Close. Its calls are taken one
// at a time, concurrent ones in no promised order; Call is safe for
// concurrent use.
type Session struct {
	r    *run
	lock checkpoint.Lock
	// turn is a token: whoever holds it takes the next round.
	turn chan struct{}
	// broken is the error that left a round open; no round follows it.
	broken error
	// paused is the error of a session whose agent Pause stopped: its run
	// ended at the round it was taking and the agent's lock is released.
	paused error
	// pausedCh is closed when it is; closed by Close (watchIdle).
	pausedCh, closed chan struct{}
	// started, while a call whose arguments are valid is taken, is told
	// when its tool starts (see CallOptions); call is its id. Both are
	// guarded by r.mu, which the run's events are emitted under.
	started func()
	call    string
	// unmade, for a session whose agent is made at its first call (see
	// SessionOptions.AtFirstCall), says how; nil once it is made. Until
	// then lock is nil and the run's journal takes no write.
	unmade *unmade
}

// unmade is what makes a session's new agent at its first call.
type unmade struct {
	e    *Engine
	opts RunOptions
	mods []toolModule
}

// SessionOptions says which agent a session drives.
type SessionOptions struct {
	// Agent is the agent file served: a new agent is made with it, and an
	// existing one is served with it from now on (the definition it makes
	// journaled), unless Existing decides otherwise. Nil serves an
	// existing agent with the agent file and modules it was made with (as
	// `cairn run --id` does without -f).
	Agent *AgentFile
	// Existing, when set, decides which agent file an existing agent is
	// served with: it is given the one the agent was made with (as last
	// served) and returns it, to keep it, or another, or an error that
	// refuses the session. It is not called for a new agent.
	Existing func(made *AgentFile) (*AgentFile, error)
	// ID is the agent's id: a new agent is made when it is empty or names
	// no agent; an existing one continues, its interrupted round sealed.
	ID        string
	Workspace string
	Labels    checkpoint.Labels
	OnEvent   EventFunc
	// AtFirstCall: a new agent is made at the session's first call, not
	// when it opens, so that a session that takes no call (a client that
	// only lists the tools) leaves nothing in the store. The open checks
	// what making it would (the agent file, its modules and servers, the
	// workspace and its size) and writes nothing; ID is chosen then. An
	// existing agent is opened as without it.
	AtFirstCall bool
}

// SessionTool is a tool a session offers: its manifest's entry, and the
// JSON Schema of its arguments as the model would be sent it.
type SessionTool struct {
	abi.Tool
	Schema json.RawMessage
	// Unsandboxed: the tool is an MCP server's, run outside the sandbox.
	Unsandboxed bool
	// Net: the tool's grant lets it reach the network; NetMutates: by a
	// method not safe to repeat (POST, PUT, PATCH, DELETE...), which may
	// change what is on the remote side.
	Net, NetMutates bool
}

// CallOutcome is what one call of a session came to.
type CallOutcome struct {
	// Call is the call's id in the agent's journal; Round its round.
	Call  string
	Round int
	// Output is what the tool answered, or why it failed or was refused.
	Output  string
	IsError bool
}

// ErrSessionBroken: a round of the session could not be committed; the
// session takes no more calls.
var ErrSessionBroken = errors.New("session cannot take more calls")

// ErrSessionPaused: Pause stopped the session's agent at a round boundary;
// the session takes no more calls, and a new session goes on (or `cairn
// resume`, for an agent file with a model of its own: see GoesOn).
var ErrSessionPaused = errors.New("the session's agent was paused")

// errNoSession is the error of a method called on a Session not made by
// Engine.OpenSession.
var errNoSession = errors.New("no session: open one with Engine.OpenSession")

// clientTurns is the model of a session's run: the caller takes the
// model's turns, so the provider is never asked.
var clientTurns = model.Spec{Provider: "script", ScriptData: []byte("turns: []\n")}

// callerTurns says whether an agent file's model is a session's: the
// script provider with no script, which `cairn mcp` serves without
// -f, whose turns only a session's caller can take. Resume seals such an
// agent's interrupted round and stops there.
func callerTurns(spec model.Spec) bool {
	return spec.Provider == "script" && spec.Script == "" && spec.ScriptData == nil
}

// OpenSession opens (or makes) the agent and takes its lock. An agent left
// mid-round by a crash has its in-flight calls sealed and its round
// committed first, as `cairn resume` would, without asking any model.
//
// # Errors
//
// As Run: checkpoint.ErrLocked, modules that do not load or ask for more
// than granted, a missing workspace; ErrNoAgentFile without opts.Agent
// for an agent that does not exist; what opts.Existing refuses with;
// ErrInterrupted for an agent whose run stopped awaiting a person's
// decision on a call (`cairn approve` or `cairn deny` makes it).
func (e *Engine) OpenSession(ctx context.Context, opts SessionOptions) (*Session, error) {
	if err := e.begin(ctx); err != nil {
		return nil, err
	}
	if opts.Agent == nil && opts.ID == "" {
		return nil, ErrNoAgentFile
	}
	if opts.ID == "" {
		opts.ID = opts.Agent.Name + "-" + newID()
	}
	if err := checkpoint.CheckID(opts.ID); err != nil {
		return nil, err
	}
	runID := "run-" + newID()
	if opts.AtFirstCall && opts.Agent != nil && !e.store.Exists(opts.ID) {
		return e.openUnmade(ctx, opts, runID)
	}
	lock, err := e.store.Lock(opts.ID, checkpoint.ThisProcess(runID))
	if err != nil {
		return nil, err
	}
	r, err := e.sessionRun(ctx, opts, runID)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	return newSession(r, lock, nil), nil
}

// newSession is the session of run r, its agent's lock held (nil while u
// is to make it).
func newSession(r *run, lock checkpoint.Lock, u *unmade) *Session {
	s := &Session{r: r, lock: lock, unmade: u, turn: make(chan struct{}, 1), pausedCh: make(chan struct{}), closed: make(chan struct{})}
	s.turn <- struct{}{}
	go s.watchIdle()
	onEvent := r.onEvent
	r.mu.Lock()
	r.onEvent = func(e Event) {
		if onEvent != nil {
			onEvent(e)
		}
		s.toolStarted(e)
	}
	r.mu.Unlock()
	return s
}

// openUnmade opens the session of a new agent made at its first call
// (SessionOptions.AtFirstCall): its tools are bound and its workspace
// checked as making it would, and nothing is written.
func (e *Engine) openUnmade(ctx context.Context, opts SessionOptions, runID string) (*Session, error) {
	spec := clientTurns
	ropts := RunOptions{Agent: opts.Agent, ID: opts.ID, Workspace: opts.Workspace, Labels: opts.Labels, Model: &spec}
	ws, mods, err := newAgentParts(opts.Agent, opts.Workspace)
	if err != nil {
		return nil, err
	}
	if fi, serr := os.Stat(ws); serr == nil && fi.IsDir() && e.timeline() != nil {
		// As storeBase would refuse it when the agent is made.
		if _, err := scanWorkspace(ws, e.limit.orDefault(), nil); err != nil {
			return nil, fmt.Errorf("keep the workspace of agent %q in the store: %w", opts.ID, err)
		}
	}
	st := checkpoint.NewState(opts.ID, checkpoint.Definition{Workspace: ws}, opts.Labels, now())
	r, err := e.newRun(ctx, opts.Agent, mods, &spec, ws, opts.ID, runID, unmadeLog{st})
	if err != nil {
		return nil, err
	}
	r.onEvent, r.autoDeny, r.commitCancelled = opts.OnEvent, true, true
	return newSession(r, nil, &unmade{e: e, opts: ropts, mods: mods}), nil
}

// makeUnmade makes the agent of a session opened with AtFirstCall, as a run
// makes a new agent, and starts its run; what fails leaves no agent
// behind. The caller holds the turn.
func (s *Session) makeUnmade() error {
	u, r := s.unmade, s.r
	lock, err := u.e.store.Lock(r.agentID, checkpoint.ThisProcess(r.id))
	if err != nil {
		return err
	}
	log, _, err := u.e.makeAgent(u.opts, u.mods, r.workspace)
	if err != nil {
		lock.Unlock()
		return err
	}
	held := r.log.Log
	r.log.Log = log
	if err = r.keepHistory(u.e.store); err == nil {
		if err = r.begin(checkpoint.RunInfo{ID: r.id}, ""); err != nil {
			r.history.Close()
			r.history = nopWriter{}
		}
	}
	if err != nil {
		r.log.Log = held
		err = errors.Join(err, log.Close(), u.e.store.Remove(r.agentID))
		lock.Unlock()
		return err
	}
	s.lock, s.unmade = lock, nil
	return nil
}

// unmadeLog is the journal of a session's agent not made yet (see
// SessionOptions.AtFirstCall): its state is the new agent's, and it takes
// no write.
type unmadeLog struct{ st *checkpoint.State }

// errUnmade is the error of a write to an unmadeLog.
var errUnmade = errors.New("the session's agent is made at its first call")

func (l unmadeLog) Append(...checkpoint.Record) error          { return errUnmade }
func (l unmadeLog) Commit(...checkpoint.Record) (int64, error) { return 0, errUnmade }
func (l unmadeLog) Sync() error                                { return errUnmade }
func (l unmadeLog) State() *checkpoint.State                   { return l.st }
func (l unmadeLog) Close() error                               { return nil }

// sessionRun opens or makes the agent's run, sealing an interrupted round.
func (e *Engine) sessionRun(ctx context.Context, opts SessionOptions, runID string) (*run, error) {
	var rec *checkpoint.Recovered
	var r *run
	var err error
	switch {
	case e.store.Exists(opts.ID):
		r, rec, err = e.reopen(ctx, opts, runID)
	case opts.Agent == nil:
		return nil, fmt.Errorf("agent %q does not exist: %w", opts.ID, ErrNoAgentFile)
	default:
		r, err = e.createSession(ctx, opts, runID)
	}
	if err != nil {
		return nil, err
	}
	r.onEvent, r.autoDeny, r.commitCancelled = opts.OnEvent, true, true
	if err := r.keepHistory(e.store); err != nil {
		r.close()
		return nil, err
	}
	if err := r.sealInterrupted(ctx, rec, runID); err != nil {
		r.close()
		return nil, fmt.Errorf("session of agent %q: %w", opts.ID, err)
	}
	return r, nil
}

// createSession makes a new agent for a session, as a run makes one: its
// model is the caller, and a start that fails leaves no agent behind.
func (e *Engine) createSession(ctx context.Context, opts SessionOptions, runID string) (*run, error) {
	spec := clientTurns
	return e.create(ctx, RunOptions{Agent: opts.Agent, ID: opts.ID, Workspace: opts.Workspace, Labels: opts.Labels,
		Model: &spec}, runID)
}

// reopen opens an existing agent with the agent file the options name
// (see SessionOptions.Agent and Existing).
func (e *Engine) reopen(ctx context.Context, opts SessionOptions, runID string) (*run, *checkpoint.Recovered, error) {
	rec, log, err := e.store.Open(opts.ID)
	if err != nil {
		return nil, nil, err
	}
	if rec.State.Status == checkpoint.StatusApproval && len(awaitingDecision(rec.Tail)) > 0 {
		// A run stopped for a person's decision, which is theirs to make
		// (a crash during a session's question leaves it running: its
		// question's asker is gone, and sealing denies it).
		log.Close()
		what, how := awaitingAdviceOf(rec, opts.ID)
		return nil, nil, fmt.Errorf("agent %q is %s: %w; %s, or serve it again with `cairn mcp --id %s`, which finishes that round first",
			opts.ID, what, ErrInterrupted, how, opts.ID)
	}
	if rec.State.Prompt != "" {
		// Its first run stopped before it journaled the prompt the agent
		// was made with: a session's run would start without it, and the
		// prompt would be lost. Its resume gives it.
		log.Close()
		return nil, nil, fmt.Errorf("agent %q stopped before its first run started on the prompt it was made with: %w; "+
			"resume it first (`cairn resume %s`) to go on with that prompt, then serve it", opts.ID, ErrInterrupted, opts.ID)
	}
	ws := rec.State.Definition.Workspace
	if opts.Workspace != "" {
		ws = opts.Workspace
	}
	af, mods, err := e.sessionAgent(opts, rec.State.Definition, ws, log)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	spec := clientTurns
	r, err := e.newRun(ctx, af, mods, &spec, ws, opts.ID, runID, log)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	return r, rec, nil
}

// sessionAgent is the agent file, and its modules, that an existing agent
// whose definition is old is served with on ws: opts.Agent, or, without
// it or as opts.Existing decides, the one it was made with, read back
// from the store (its model, prompt and approval rules kept, whatever
// the files on disk say now).
func (e *Engine) sessionAgent(opts SessionOptions, old checkpoint.Definition, ws string, log checkpoint.Log) (*AgentFile, []toolModule, error) {
	if opts.Agent != nil && opts.Existing == nil {
		mods, err := e.redefine(opts.Agent, old, ws, log)
		return opts.Agent, mods, err
	}
	made, mods, err := e.rebuild(old)
	if err != nil {
		return nil, nil, fmt.Errorf("agent %q: %w", opts.ID, err)
	}
	af := made
	if opts.Existing != nil {
		if af, err = opts.Existing(made); err != nil {
			return nil, nil, err
		}
	}
	if af != made {
		mods, err := e.redefine(af, old, ws, log)
		return af, mods, err
	}
	if err := e.storeRebuilt(old, mods); err != nil {
		return nil, nil, err
	}
	if ws == old.Workspace {
		return af, mods, nil
	}
	def := old // served on another workspace: the definition says which
	def.Modules, def.Workspace = maps.Clone(old.Modules), ws
	return af, mods, log.Append(checkpoint.Record{Type: checkpoint.RecDefine, Time: now(), Definition: &def})
}

// redefine journals the definition af makes when it differs from the
// agent's stored one, old: a session runs the agent file given now (a
// later `cairn mcp --id` may serve other tools), and `cairn show` and
// `cairn verify` must find what its calls ran.
func (e *Engine) redefine(af *AgentFile, old checkpoint.Definition, ws string, log checkpoint.Log) ([]toolModule, error) {
	mods, err := loadModules(af)
	if err != nil {
		return nil, err
	}
	def, err := e.define(af, mods, ws)
	if err != nil {
		return nil, err
	}
	def.Above = old.Above // they bind the agent whatever its file
	if def.AgentFile == old.AgentFile && def.AgentPath == old.AgentPath && def.AgentDir == old.AgentDir &&
		def.Script == old.Script && def.Workspace == old.Workspace && maps.Equal(def.Modules, old.Modules) {
		return mods, nil
	}
	return mods, log.Append(checkpoint.Record{Type: checkpoint.RecDefine, Time: now(), Definition: &def})
}

// sealInterrupted starts the session's run; when rec is an agent a stop
// left mid-round, it first finishes that round as resume's seal strategy
// does: finished calls kept, their unapplied changes applied, calls in
// flight sealed, calls awaiting a decision denied (no one is there to
// decide them).
func (r *run) sealInterrupted(ctx context.Context, rec *checkpoint.Recovered, runID string) error {
	info := checkpoint.RunInfo{ID: runID}
	if rec == nil || !rec.Interrupted() {
		return r.begin(info, "")
	}
	if last := rec.State.LastRun(); last != nil {
		info.ResumedFrom = last.ID
	}
	info.Strategy = string(StrategySeal)
	report := r.inspect(rec)
	if err := r.begin(info, ""); err != nil {
		return err
	}
	var err error
	if report.Applied, err = r.finishKept(rec); err != nil {
		return err
	}
	r.emit(report.event(StrategySeal))
	r.discardStaging(rec.State.Round + 1)
	return r.settle(ctx, rec, report, StrategySeal)
}

// ID is the session's agent id.
func (s *Session) ID() string { return s.r.agentID }

// Workspace is the directory the session's tools work in.
func (s *Session) Workspace() string { return s.r.workspace }

// Tools lists the tools the session offers, by name.
func (s *Session) Tools() []SessionTool {
	out := make([]SessionTool, 0, len(s.r.tools.specs))
	for _, spec := range s.r.tools.specs {
		t := s.r.tools.tools[spec.Name]
		st := SessionTool{Tool: t.spec, Schema: spec.InputSchema, Unsandboxed: t.remote != nil}
		if n := t.grant.Net; n != nil {
			st.Net, st.NetMutates = true, n.mutates()
		}
		out = append(out, st)
	}
	return out
}

// Asks reports whether the agent file's approval rules put a call of tool
// with input to a person, so that a caller can ask before it calls.
func (s *Session) Asks(tool string, input json.RawMessage) bool {
	action, _ := s.r.actionOf(conversation.ToolCall{Name: tool, Input: string(input)})
	return action == ActionAsk
}

// CallOptions are what a caller adds to a call of a session.
type CallOptions struct {
	// Ask decides a call the approval rules put to a person; without it
	// such a call is denied, saying why.
	Ask Approver
	// Started, when set, is called once the call's tool starts: after its
	// approval, if it needed one, and only if its arguments match the
	// tool's input schema. It is not called for a call that never runs
	// (denied, refused for its arguments). It is called as the call's
	// tool_start event is emitted, with the run's events held back, and
	// must not block.
	Started func()
}

// Call runs one call of tool with input (a JSON object) as a round of the
// agent, and returns its result once the round is committed and its
// effects applied. Approval rules apply: a call a rule says to ask about
// is put to ask, and denied with the reason when ask is nil. A call whose
// ctx ends while it runs is stopped; its result says so and its changes
// are discarded.
//
// # Errors
//
// ctx's error when it ends before the call starts; ErrSessionBroken, with
// the cause, when a round could not be journaled: then the agent needs
// a new session of it, which seals what was in flight.
// A failing tool is not an error: its outcome says it failed.
func (s *Session) Call(ctx context.Context, tool string, input json.RawMessage, ask Approver) (*CallOutcome, error) {
	return s.CallWith(ctx, tool, input, CallOptions{Ask: ask})
}

// CallWith is Call with options: see CallOptions.
func (s *Session) CallWith(ctx context.Context, tool string, input json.RawMessage, opts CallOptions) (*CallOutcome, error) {
	if s == nil || s.r == nil {
		return nil, errNoSession
	}
	select {
	case <-s.turn:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { s.turn <- struct{}{} }()
	if s.broken != nil {
		return nil, s.broken
	}
	if s.unmade != nil {
		if err := s.makeUnmade(); err != nil {
			return nil, fmt.Errorf("make agent %s at the session's first call: %w", s.r.agentID, err)
		}
	}
	if s.paused == nil && s.r.pauseRequested() {
		s.pause(s.r.state().Round) // asked between calls: at the boundary now
	}
	if s.paused != nil {
		return nil, s.paused
	}
	r := s.r
	r.approver = opts.Ask
	round := r.state().Round + 1
	c := conversation.ToolCall{ID: fmt.Sprintf("mcp-%d", round), Name: tool, Input: string(input)}
	if opts.Started != nil && !r.tools.refusesInput(c) {
		s.watchStart(c.ID, opts.Started)
		defer s.watchStart("", nil)
	}
	turn := conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{c}}
	err := r.log.Append(checkpoint.Record{Type: checkpoint.RecTurn, Time: now(), Round: round, Message: &turn,
		Usage: &conversation.Usage{}})
	if err == nil {
		r.emit(Event{Type: EventModelTurn, Round: round, Calls: 1, Usage: &conversation.Usage{}})
		err = r.finishRound(ctx, round, turn.ToolCalls, nil)
	}
	if err != nil {
		s.broken = fmt.Errorf("%w: round %d of agent %s: %w", ErrSessionBroken, round, r.agentID, err)
		return nil, s.broken
	}
	out := s.outcome(c, round)
	if r.pauseRequested() {
		s.pause(round)
	}
	return out, nil
}

// idlePauseLook is how often a session that runs no call looks for a
// pause request.
const idlePauseLook = time.Second

// watchIdle looks for a pause request while no call runs, so that a
// session asked to pause between calls stops within idlePauseLook, as a
// run stops at its boundary, not at its next call, which may never come.
// A call looks for one itself, before and after its round.
func (s *Session) watchIdle() {
	t := time.NewTicker(idlePauseLook)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-s.pausedCh:
			return
		case <-t.C:
		}
		select {
		case <-s.turn:
		default:
			continue // a call runs, or the session closes
		}
		if s.paused == nil && s.broken == nil && s.unmade == nil && s.r.pauseRequested() {
			s.pause(s.r.state().Round)
		}
		s.turn <- struct{}{}
	}
}

// watchStart has started told when the tool of call starts; "" stops it.
func (s *Session) watchStart(call string, started func()) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.call, s.started = call, started
}

// toolStarted tells the call being watched that its tool started; it is
// called with each of the run's events, under r.mu.
func (s *Session) toolStarted(e Event) {
	if e.Type == EventToolStart && e.Call != nil && s.started != nil && e.Call.ID == s.call {
		s.started()
	}
}

// pause ends the session's run as paused on request after round, and
// releases the agent, as a run stops at the boundary Pause asked for.
func (s *Session) pause(round int) {
	_, err := s.r.end(StatusPaused, pausedOnRequest)
	err = errors.Join(err, s.r.close())
	s.lock.Unlock()
	s.paused = fmt.Errorf("%w after round %d: agent %s takes no more calls here; %s goes on",
		ErrSessionPaused, round, s.r.agentID, s.GoesOn())
	if err != nil {
		s.paused = fmt.Errorf("%w (ending its run: %v)", s.paused, err)
	}
	close(s.pausedCh)
}

// GoesOn is what goes on with the session's agent once it is paused: a
// new session (`cairn mcp --id AGENT`), or also `cairn resume AGENT` for
// an agent file with a model of its own. An agent whose turns come only
// from a client is sealed and stopped by resume (see callerTurns).
func (s *Session) GoesOn() string {
	if callerTurns(s.r.af.Model) {
		return fmt.Sprintf("`cairn mcp --id %s`", s.r.agentID)
	}
	return fmt.Sprintf("`cairn mcp --id %s` or `cairn resume %s`", s.r.agentID, s.r.agentID)
}

// Paused is closed once Pause has stopped the session's agent.
func (s *Session) Paused() <-chan struct{} { return s.pausedCh }

// outcome reads the call's result from the committed round.
func (s *Session) outcome(c conversation.ToolCall, round int) *CallOutcome {
	out := &CallOutcome{Call: c.ID, Round: round}
	msgs := s.r.state().Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == conversation.RoleTool && m.CallID == c.ID {
			out.Output, out.IsError = m.Text, m.IsError
			break
		}
	}
	return out
}

// Close ends the session's run, journaling that it ended, and releases the
// agent.
func (s *Session) Close() error {
	if s == nil || s.r == nil {
		return errNoSession
	}
	<-s.turn
	close(s.closed)
	if s.paused != nil {
		return nil // its run ended when it was paused
	}
	if s.unmade != nil {
		return s.r.close() // nothing was made: nothing to end
	}
	status := StatusDone
	reason := ""
	if s.broken != nil {
		status, reason = StatusFailed, s.broken.Error()
	}
	_, err := s.r.end(status, reason)
	err = errors.Join(err, s.r.close())
	s.lock.Unlock()
	return err
}
