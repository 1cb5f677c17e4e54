package host

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Engine runs agents. It holds what the agents of one process share: the
// sandbox runtime, whose compiled modules every call reuses, and the store
// their state is committed to. An Engine is safe for concurrent use by runs
// of different agents; the store's lock keeps one agent to one run.
type Engine struct {
	rt      *sandbox.Runtime
	store   checkpoint.Store
	connect Connector
	limit   WorkspaceLimit
	digests *moduleDigests
	// unkeptAbove is Config.UnkeptAbove.
	unkeptAbove func(ctx context.Context, store checkpoint.Store, agent string) error
	// wrapModel, set by tests, wraps every provider a run opens.
	wrapModel func(model.Provider) model.Provider
	closed    atomic.Bool // Close was called: nothing starts any more
}

// Config configures an Engine. The zero value compiles modules in memory
// and keeps agents in memory.
type Config struct {
	// CacheDir keeps compiled modules on disk between processes; it is
	// created private to the user.
	CacheDir string
	// CacheMax bounds the compiled code kept in CacheDir, in bytes
	// (sandbox.Config.CacheMax): 0 is sandbox.DefaultCacheMax, negative
	// no bound.
	CacheMax int64
	// Engine runs tool modules compiled or interpreted (sandbox.Engine);
	// "" is sandbox.EngineAuto.
	Engine sandbox.Engine
	// Store keeps the agents; nil means an in-memory store.
	Store checkpoint.Store
	// Connect reaches the MCP servers agent files list (host/mcp.Connect);
	// nil: an agent that lists one does not start.
	Connect Connector
	// WorkspaceLimit bounds the workspace a run copies into the store.
	WorkspaceLimit WorkspaceLimit
	// UnkeptAbove, when set, is asked of a top-level agent whose stored
	// definition keeps no agent file above it (checkpoint.Definition.Above)
	// and that no ResumeOptions.Above is given for, before it runs: its
	// error refuses the run of the agent, and of every sub-agent under
	// it, and a fork of any of them (Fork), which would copy a definition
	// that keeps none. It is for an agent made from a sub-agent's definition by a cairn
	// that did not keep the agent file above it, whose approval rules
	// would otherwise not bind it (host/workflow.UnkeptParent).
	UnkeptAbove func(ctx context.Context, store checkpoint.Store, agent string) error
}

// OpenStore opens (making it if needed) the file store in dir. A process
// that runs many agents at once passes checkpoint.WithGroupCommit(), so
// that their rounds share fdatasyncs, and closes the store after its runs.
// Such a process does well to run with one more GOMAXPROCS than cores: a
// goroutine waiting in an fdatasync holds its P for a good part of the sync, and
// the extra P runs another agent meanwhile.
func OpenStore(dir string, opts ...checkpoint.FileStoreOption) (*checkpoint.FileStore, error) {
	return checkpoint.OpenFileStore(dir, opts...)
}

// Compiling reports whether a tool module is being compiled (see
// sandbox.Runtime.Compiling): a progress line can say so.
func (e *Engine) Compiling() bool { return e.rt.Compiling() }

// NewEngine starts an engine.
//
// # Errors
//
// ErrNoStore for a Config.Store that is a nil pointer (an OpenStore whose
// error was dropped), and a sandbox runtime that cannot start.
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Store != nil {
		if err := usable(cfg.Store); err != nil {
			return nil, err
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	rt, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: cfg.CacheDir, CacheMax: cfg.CacheMax, Engine: cfg.Engine})
	if err != nil {
		return nil, fmt.Errorf("start sandbox runtime: %w", err)
	}
	store := cfg.Store
	if store == nil {
		store = checkpoint.NewMemStore()
	}
	return &Engine{rt: rt, store: store, connect: cfg.Connect, limit: cfg.WorkspaceLimit,
		digests: newModuleDigests(cfg.CacheDir), unkeptAbove: cfg.UnkeptAbove}, nil
}

// Close releases the engine's runtime. Runs must have returned. Closing a
// nil or zero Engine does nothing.
func (e *Engine) Close(ctx context.Context) error {
	if e.ready() != nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	e.closed.Store(true)
	return e.rt.Close(ctx)
}

// Store is where the engine keeps its agents; nil for a nil or zero Engine.
func (e *Engine) Store() checkpoint.Store {
	if e == nil {
		return nil
	}
	return e.store
}

// ready says whether e was made by NewEngine and not closed: ErrNoEngine
// if not, ErrEngineClosed after Close.
func (e *Engine) ready() error {
	if e == nil || e.rt == nil || e.store == nil {
		return ErrNoEngine
	}
	if e.closed.Load() {
		return ErrEngineClosed
	}
	return nil
}

// begin is where a method that locks or does I/O starts: ErrNoEngine for
// an Engine not made by NewEngine, else ctx's error once ctx is done (a
// nil ctx is never done). The stores' operations take no context, so a
// call stops at its start, not midway.
func (e *Engine) begin(ctx context.Context) error {
	if err := e.ready(); err != nil {
		return err
	}
	return ctxErr(ctx)
}

// usableNow is usable, then ctx's error as begin gives it.
func usableNow(ctx context.Context, store checkpoint.Store) error {
	if err := usable(store); err != nil {
		return err
	}
	return ctxErr(ctx)
}

// ctxErr is ctx.Err(), nil for a nil ctx.
func ctxErr(ctx context.Context) error {
	if ctx == nil {
		return nil
	}
	return ctx.Err()
}

// usable says whether store can be used: ErrNoStore for nil, or for a nil
// pointer in the interface, which is what an OpenStore whose error was
// dropped gives.
func usable(store checkpoint.Store) error {
	if store == nil {
		return fmt.Errorf("%w: the store is nil", ErrNoStore)
	}
	if v := reflect.ValueOf(store); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("%w: the store is a nil %T; was the error of OpenStore dropped?", ErrNoStore, store)
	}
	return nil
}

// RunOptions says what to run.
type RunOptions struct {
	// Agent is the agent file. It may be nil for an agent that exists,
	// which then runs with the agent file and modules it was made with.
	Agent *AgentFile
	// ID is the agent's id. A new agent is made when it is empty or names
	// no agent; an existing agent continues its conversation.
	ID string
	// Fresh starts an existing agent over, forgetting its conversation:
	// it is made anew from Agent, which Fresh needs.
	Fresh bool
	// Workspace overrides the agent file's workspace directory.
	Workspace string
	// Prompt is the user's message that starts the run.
	Prompt string
	// Model overrides the agent file's model.
	Model *model.Spec
	// Labels identify a new agent; they are kept in its state and carried
	// in its events.
	Labels checkpoint.Labels
	// OnEvent receives every event of the run, in order. May be nil.
	OnEvent EventFunc
	// Approver decides calls the approval rules put to a person; nil
	// means no one can be asked: the run pauses awaiting approval, or
	// with AutoDeny such calls are denied.
	Approver Approver
	AutoDeny bool

	sub *subRun // a delegation's, for the run of its sub-agent
}

// Result is how a run ended.
type Result struct {
	Agent, Run string
	Status     Status
	// Reason says why a run paused or failed.
	Reason string
	// Rounds is the number of rounds the agent has committed in all.
	Rounds    int
	Usage     conversation.Usage
	ToolCalls int
	// Text is the model's last text.
	Text string
	// Awaiting, when Status is StatusAwaitingApproval, are the ids of the
	// agent's calls that wait for a decision (none when a sub-agent's
	// call waits: Reason names it).
	Awaiting []string
}

// AwaitingCall is the call to name to decide on: its id when one call
// waits, else CALL, for the caller to fill in.
func (r *Result) AwaitingCall() string {
	if len(r.Awaiting) == 1 {
		return r.Awaiting[0]
	}
	return "CALL"
}

// Errors a caller branches on.
var (
	// ErrNoWorkspace: neither the agent file nor the caller names a workspace.
	ErrNoWorkspace = errors.New("no workspace: set `workspace:` in the agent file or pass one")
	// ErrInterrupted: the agent stopped mid-run; resume it before running it again.
	ErrInterrupted = errors.New("agent was interrupted")
	// ErrNoEngine: a method was called on a nil Engine, or on one not made
	// by NewEngine.
	ErrNoEngine = errors.New("no engine: make one with host.NewEngine")
	// ErrEngineClosed: a method that starts work was called after Close.
	ErrEngineClosed = errors.New("the engine is closed: make a new one with host.NewEngine")
	// ErrNoStore: a function was given a nil store, or a nil pointer to one.
	ErrNoStore = errors.New("no store: open one with host.OpenStore and check its error")
	// ErrNoAgentFile: RunOptions has no Agent, and names no agent that
	// exists to take it from.
	ErrNoAgentFile = errors.New("no agent file: load one with host.LoadAgentFile or host.ParseAgentFile, or name an agent that exists")
	// ErrMissing: a file or directory the agent file names (its
	// workspace, a tool module, the model's script) is not there.
	ErrMissing = errors.New("a file the agent file names is not there")
)

// missing wraps err, from reading what the agent file names as what, so
// that it is ErrMissing when the file is not there.
func missing(what string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return missingError{fmt.Errorf("%s: %w; fix the agent file, or make it", what, err)}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// checkWorkspace fails, ErrMissing, unless ws is a directory. The advice
// names both places a workspace comes from: the agent file and the
// caller's override (--workspace).
func checkWorkspace(ws string) error {
	const advice = "name one that is: the agent file's `workspace:`, or --workspace"
	fi, err := os.Stat(ws)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return missingError{fmt.Errorf("workspace: %w; make that directory, or %s", err, advice)}
	case err != nil:
		return fmt.Errorf("workspace: %w", err)
	case !fi.IsDir():
		return missingError{fmt.Errorf("workspace %s is not a directory; %s", ws, advice)}
	}
	return nil
}

// missingError is an error that is ErrMissing.
type missingError struct{ error }

func (e missingError) Is(target error) bool { return target == ErrMissing }
func (e missingError) Unwrap() error        { return e.error }

// Run runs an agent until the model answers without tool calls, a limit
// pauses it, or ctx ends (which pauses it too). Every round is committed to
// the store before the next begins.
//
// # Errors
//
// Errors that keep the run from starting: ErrNoEngine for an Engine not
// made by NewEngine, ErrNoAgentFile without opts.Agent for an agent that
// does not exist (or with Fresh), checkpoint.ErrLocked when another
// process runs the agent, ErrInterrupted for an agent that must be resumed
// first, modules that do not load or ask for more than granted, a missing
// workspace, a model that cannot be set up. Once the run has started,
// failures are reported in the Result and the run_end event instead.
func (e *Engine) Run(ctx context.Context, opts RunOptions) (*Result, error) {
	if err := e.ready(); err != nil {
		return nil, err
	}
	if opts.Agent == nil && opts.Fresh {
		// Fresh makes the agent anew: from its file, not from what it was.
		return nil, fmt.Errorf("start agent %q afresh: Fresh makes it anew from RunOptions.Agent, which is nil: %w", opts.ID, ErrNoAgentFile)
	}
	if opts.Agent == nil && opts.ID == "" {
		return nil, ErrNoAgentFile
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.ID == "" {
		opts.ID = opts.Agent.Name + "-" + newID()
	}
	if err := checkpoint.CheckID(opts.ID); err != nil {
		return nil, err
	}
	if opts.Agent != nil && opts.sub == nil {
		// A file given: its sub-agents' scripts are beside it, on this
		// machine (a delegation's sub-agent was checked with its parent).
		if err := opts.Agent.checkSubModels(); err != nil {
			return nil, err
		}
	}
	runID := "run-" + newID()
	lock, err := e.store.Lock(opts.ID, checkpoint.ThisProcess(runID))
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	if err := e.clearPause(opts.ID); err != nil {
		return nil, err
	}
	r, err := e.startRun(ctx, opts, runID)
	if err != nil {
		return nil, err
	}
	defer r.close()
	if err := r.keepHistory(e.store); err != nil {
		return nil, err
	}
	r.adopt(opts.sub)
	r.onEvent, r.approver, r.autoDeny = opts.OnEvent, opts.Approver, opts.AutoDeny
	if err := r.begin(checkpoint.RunInfo{ID: runID}, opts.Prompt); err != nil {
		return nil, err
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

// openRoundError refuses a new prompt to an agent whose last round is
// still open, saying why it is: calls awaiting a decision (named, with
// the commands that decide them), a process that stopped without ending
// its run, or a run that ended mid-round (a model that failed, a pause),
// with the reason it recorded.
func openRoundError(id string, rec *checkpoint.Recovered) error {
	if what, how := awaitingAdviceOf(rec, id); what != "" {
		return fmt.Errorf("agent %q is %s: %w; %s, then give it the prompt", id, what, ErrInterrupted, how)
	}
	st := rec.State
	if st.Status == checkpoint.StatusRunning {
		return fmt.Errorf("agent %q stopped during round %d: %w; resume it first (`cairn resume %s`), then give it the prompt",
			id, st.Round+1, ErrInterrupted, id)
	}
	return fmt.Errorf("agent %q ended its last run during round %d (%s: %s): %w; resume it first (`cairn resume %s`) to finish that round, then give it the prompt",
		id, st.Round+1, st.Status, cmp.Or(st.Reason, "no reason recorded"), ErrInterrupted, id)
}

// dropLeftovers removes what an agent of this id that was removed left
// beside its state: its last round's staging, its rounds' changes and its
// marks of delegations begun. A new agent of the id reuses their paths,
// since its calls reuse the old one's ids.
func (e *Engine) dropLeftovers(id string) error {
	staging := e.stagingRoot(id)
	if err := errors.Join(overlay.Discard(staging), os.RemoveAll(e.changesRoot(id)),
		os.RemoveAll(filepath.Join(filepath.Dir(staging), "delegations"))); err != nil {
		return fmt.Errorf("start agent %q afresh: %w", id, err)
	}
	return nil
}

// leftoversOwn says whether what lies beside an agent's state that the
// store does not have can only be an old agent's of that id: true for a
// file store and one whose Identity names it for every process; false
// for one known only by its address in this process (in memory), whose
// directory another process's store may share.
func leftoversOwn(s checkpoint.Store) bool {
	_, dir := s.(interface{ Dir() string })
	_, named := s.(interface{ Identity() string })
	return dir || named
}

// startRun opens or creates the agent and builds its run.
func (e *Engine) startRun(ctx context.Context, opts RunOptions, runID string) (*run, error) {
	if err := e.checkStaging(); err != nil {
		return nil, err
	}
	if opts.Fresh && e.store.Exists(opts.ID) {
		if err := e.removeChildren(opts.ID); err != nil {
			return nil, err
		}
		if err := e.store.Remove(opts.ID); err != nil {
			return nil, err
		}
		if err := e.dropLeftovers(opts.ID); err != nil {
			return nil, err
		}
	}
	if !e.store.Exists(opts.ID) {
		if opts.Agent == nil {
			return nil, fmt.Errorf("agent %q does not exist: %w", opts.ID, ErrNoAgentFile)
		}
		// A removal that a crash cut short, after the state and before
		// dropLeftovers, leaves what the old agent had beside its state,
		// as does a removal on another node of what this node's runs
		// left: in a file store's agent directory, or this node's
		// directory of a store that names itself (a PostgreSQL
		// database), it can only be this id's.
		if leftoversOwn(e.store) {
			if err := e.dropLeftovers(opts.ID); err != nil {
				return nil, err
			}
		}
		return e.create(ctx, opts, runID)
	}
	rec, log, err := e.store.Open(opts.ID)
	if err != nil {
		return nil, err
	}
	if rec.Interrupted() {
		log.Close()
		return nil, openRoundError(opts.ID, rec)
	}
	if rec.State.Prompt != "" {
		log.Close()
		return nil, fmt.Errorf("agent %q stopped before its first run started on the prompt it was made with: %w; "+
			"resume it first (`cairn resume %s`) to go on with that prompt, then give it this one", opts.ID, ErrInterrupted, opts.ID)
	}
	ws := rec.State.Definition.Workspace
	if opts.Workspace != "" {
		if ws, err = filepath.Abs(opts.Workspace); err != nil {
			log.Close()
			return nil, fmt.Errorf("workspace %s: %w", opts.Workspace, err)
		}
	}
	af, mods := opts.Agent, []toolModule(nil)
	if af == nil {
		// The agent file and modules it was made with, as Resume uses.
		if af, mods, err = e.rebuild(rec.State.Definition); err == nil {
			err = e.withAncestry(ctx, af, rec.State, nil, nil)
		}
		if err != nil {
			log.Close()
			return nil, fmt.Errorf("run agent %q: %w", opts.ID, err)
		}
		if err := e.storeRebuilt(rec.State.Definition, mods); err != nil {
			log.Close()
			return nil, err
		}
	}
	r, err := e.newRun(ctx, af, mods, opts.Model, ws, opts.ID, runID, log)
	if err != nil {
		log.Close()
	}
	return r, err
}

// create stores a new agent's definition and first state. What can
// refuse its start is checked first, so that such a refused start stores
// nothing: its workspace, its model and script, and its tools, bound
// before anything is stored — the MCP servers it names started, and one
// that does not start refusing it. A kill while a server starts leaves
// nothing stored, as one before the run began. One refused once the agent
// is stored (the store failing as it writes it) leaves no agent behind,
// its blobs left for gc.
func (e *Engine) create(ctx context.Context, opts RunOptions, runID string) (*run, error) {
	ws, mods, err := newAgentParts(opts.Agent, opts.Workspace)
	if err != nil {
		return nil, err
	}
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	if err := opts.Agent.CheckModel(opts.Model); err != nil {
		return nil, err
	}
	tools, err := e.bindTools(ctx, opts.Agent, mods)
	if err != nil {
		return nil, err
	}
	log, later, err := e.makeAgent(opts, mods, ws)
	if err != nil {
		tools.closeServers()
		return nil, err
	}
	r, err := e.newRunOf(ctx, opts.Agent, mods, tools, opts.Model, ws, opts.ID, runID, log)
	if err != nil {
		// A start that fails leaves no agent behind (the lock removes the
		// directory it made once the agent has no state).
		tools.closeServers()
		log.Close()
		if rmErr := e.store.Remove(opts.ID); rmErr != nil {
			err = errors.Join(err, rmErr)
		}
		return nil, err
	}
	// The modules the store lacks are written while the first request is
	// out (blobs_later.go).
	r.provider.(*loadingProvider).alsoStart(later.start)
	return r, nil
}

// newAgentParts are what a new agent of af is made of: its workspace (as
// given, or af's) and its tool modules, checked to fit the room af gives
// them.
func newAgentParts(af *AgentFile, workspace string) (string, []toolModule, error) {
	ws, err := workspaceOf(af, workspace)
	if err != nil {
		return "", nil, err
	}
	mods, err := loadModules(af)
	if err != nil {
		return "", nil, err
	}
	if err := checkRoom(af, mods); err != nil {
		return "", nil, err
	}
	return ws, mods, nil
}

// makeAgent writes a new agent into the store, its definition made of the
// agent file, its modules and its workspace ws, and returns its journal,
// whose first commit waits for the module blobs later writes. The caller
// holds the agent's lock.
func (e *Engine) makeAgent(opts RunOptions, mods []toolModule, ws string) (checkpoint.Log, *blobWrites, error) {
	later := newBlobWrites(e.store)
	def, err := e.defineWith(opts.Agent, mods, ws, later)
	if err == nil && opts.sub == nil {
		// Made from a sub-agent's definition, not by a delegation (a
		// workflow's delegation step): the agent files above it are kept
		// with it, so that every resume is bound by them as this run is.
		def.Above, err = e.keepAbove(opts.Agent)
	}
	if err != nil {
		return nil, nil, errors.Join(err, later.wait())
	}
	st := checkpoint.NewState(opts.ID, def, opts.Labels, now())
	// Kept with the agent as it is made, so that a stop before begin
	// journals it loses nothing: the agent's resume gives it.
	st.Prompt = opts.Prompt
	if opts.sub != nil {
		st.Parent = &opts.sub.lineage
	}
	if fi, serr := os.Stat(ws); serr == nil && fi.IsDir() { // else newRun says what is wrong with it
		if st.WorkspaceBase, err = e.storeBase(ws); err != nil {
			return nil, nil, errors.Join(fmt.Errorf("keep the workspace of agent %q in the store: %w", opts.ID, err), later.wait())
		}
	}
	log, err := e.store.Create(opts.ID, st)
	if err != nil {
		return nil, nil, errors.Join(err, later.wait())
	}
	return &afterBlobs{Log: log, writes: later}, later, nil
}

// newRun binds an agent's tools and model into a run on log.
func (e *Engine) newRun(ctx context.Context, af *AgentFile, mods []toolModule, override *model.Spec,
	ws, agentID, runID string, log checkpoint.Log) (*run, error) {
	return e.newRunOf(ctx, af, mods, nil, override, ws, agentID, runID, log)
}

// bindTools binds af's tools: its modules (mods, or, for none, those af
// names, loaded), the tools of the MCP servers it names, which it starts
// (one that does not start fails it), and its native tools, checked to
// fit the room af gives them. A toolset it fails to bind has its servers
// closed.
func (e *Engine) bindTools(ctx context.Context, af *AgentFile, mods []toolModule) (*toolset, error) {
	if mods == nil {
		var err error
		if mods, err = loadModules(af); err != nil {
			return nil, err
		}
	}
	tools, err := newToolset(ctx, e.rt, af, mods)
	if err != nil {
		return nil, err
	}
	if err := tools.addServers(ctx, e.connect, af); err != nil {
		tools.closeServers()
		return nil, err
	}
	if err := tools.addNatives(af); err != nil {
		tools.closeServers()
		return nil, err
	}
	if err := af.roomFor(tools.specs); err != nil {
		tools.closeServers()
		return nil, err
	}
	return tools, nil
}

// newRunOf is newRun of tools, bound already (bindTools), or, for nil,
// of af's tools bound here from mods.
func (e *Engine) newRunOf(ctx context.Context, af *AgentFile, mods []toolModule, tools *toolset, override *model.Spec,
	ws, agentID, runID string, log checkpoint.Log) (*run, error) {
	if err := checkWorkspace(ws); err != nil {
		return nil, err
	}
	if err := e.checkStaging(); err != nil {
		return nil, err
	}
	if err := e.claimLeftovers(agentID, log.State(), runID); err != nil {
		return nil, err
	}
	if tools == nil {
		var err error
		if tools, err = e.bindTools(ctx, af, mods); err != nil {
			return nil, err
		}
	}
	tools.prepare(ws)
	provider, spec, err := openModel(af, override)
	if err != nil {
		return nil, err
	}
	if e.wrapModel != nil {
		provider = e.wrapModel(provider)
	}
	provider = &loadingProvider{Provider: provider, tools: tools}
	pool, err := openPool(ws, log.State())
	if err != nil {
		return nil, err
	}
	pauser, _ := e.store.(checkpoint.Pauser)
	r := &run{pauser: pauser, agentID: agentID, id: runID, af: af, tools: tools, provider: provider, modelName: spec.Name, priced: spec.Price != nil, scripted: spec.Provider == "script",
		workspace: ws, staging: e.stagingRoot(agentID), changes: e.changesRoot(agentID), pool: pool, log: &heldLog{Log: log}, history: nopWriter{}, startedAt: time.Now(),
		engine: e, store: e.store, blobs: e.store.PutBlob, seenBlobs: newBlobCache(e.store, af.Record),
		trimIdle: e.rt.TrimIdle, travel: e.newTravel()}
	tools.run = r
	return r, nil
}

// begin journals the run's start and its prompt.
func (r *run) begin(info checkpoint.RunInfo, prompt string) error {
	info.Started = now()
	if err := r.keepBase(); err != nil {
		return err
	}
	// The run's start and its prompt go in one write: a kill finds both
	// or neither, never a run that lost the prompt it was given.
	recs := []checkpoint.Record{{Type: checkpoint.RecRunStarted, Time: info.Started, Run: &info}}
	if prompt != "" {
		recs = append(recs, r.promptRecord(prompt))
	}
	if err := r.log.Append(recs...); err != nil {
		return err
	}
	labels := r.state().Labels
	r.emit(Event{Type: EventRunStart, ResumedFrom: info.ResumedFrom, Labels: &labels})
	r.warnOfModules()
	return nil
}

func workspaceOf(af *AgentFile, override string) (string, error) {
	ws := override
	if ws == "" {
		ws = af.WorkspaceDir()
	}
	if ws == "" {
		return "", ErrNoWorkspace
	}
	// Stored absolute: a resume from another directory finds it.
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", ws, err)
	}
	return abs, nil
}

// loadModules reads every module the agent file names and its manifest.
func loadModules(af *AgentFile) ([]toolModule, error) {
	mods := make([]toolModule, 0, len(af.Tools))
	for _, ref := range af.Tools {
		identity := moduleIdentity(af, ref)
		m, err := openModule(af, ref)
		if err != nil {
			return nil, err
		}
		m.identity = identity
		mods = append(mods, m)
	}
	return mods, nil
}

// openModule reads the module a ToolRef names: built in, its bytes; from
// a file, its head, or its bytes when its head cannot be read apart.
func openModule(af *AgentFile, ref ToolRef) (toolModule, error) {
	if _, ok := embeddedWasm(ref.Module); !ok {
		if f, ok := openModuleFile(af.resolve(ref.Module)); ok {
			m, err := readManifest(f.head)
			if err != nil {
				return toolModule{}, fmt.Errorf("tool module %s: %w", ref.Module, err)
			}
			return toolModule{Ref: ref, file: f, Manifest: m}, nil
		}
	}
	wasm, err := readModule(af, ref)
	if err != nil {
		return toolModule{}, fmt.Errorf("tool module %s: %w", ref.Module, err)
	}
	return moduleOf(ref, wasm)
}

func moduleOf(ref ToolRef, wasm []byte) (toolModule, error) {
	m, err := readManifest(wasm)
	if err != nil {
		return toolModule{}, fmt.Errorf("tool module %s: %w", ref.Module, err)
	}
	return toolModule{Ref: ref, Wasm: wasm, Manifest: m}, nil
}

// openModel opens the agent's model, or the one that overrides it.
// An override of the same provider keeps the agent file's address, key
// and price unless it names its own.
func openModel(af *AgentFile, override *model.Spec) (model.Provider, model.Spec, error) {
	spec := af.Model
	if override != nil {
		spec = af.Model.Override(*override)
	}
	if spec.Script != "" && spec.ScriptData == nil {
		spec.Script = af.resolve(spec.Script)
	}
	p, err := model.Open(spec)
	if err != nil {
		if override != nil && override.Script != "" {
			return nil, spec, missingOverride(err)
		}
		return nil, spec, af.modelError(err)
	}
	return p, spec, nil
}

// missingOverride is err, of opening the script the caller gave in place
// of the agent file's model, as missing gives it but for its advice: the
// agent file did not name the script, the caller did (--model).
func missingOverride(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return missingError{fmt.Errorf("model: %w; give --model (script:PATH) a script that is there, or make it", err)}
	}
	return fmt.Errorf("model: %w", err)
}

// modelError is err, of opening the model the agent file names or
// reading its script, as missing gives it, naming the agent file and the
// line of its model's script where the file is one of its own (a
// sub-agent defined inline in its parent's has no lines of its own).
func (af *AgentFile) modelError(err error) error {
	err = missing("model", err)
	if af.File == "" {
		return err
	}
	return af.inFile(err, "model", "script")
}

// CheckModel opens the model a run of af opens, or the one that
// overrides it, as Run does before its first round, and fails as Run
// would: ErrMissing for a script file that is not there, model.ErrScript
// for one that is no script. Opening a provider other than script reaches
// no network.
func (af *AgentFile) CheckModel(override *model.Spec) error {
	_, _, err := openModel(af, override)
	return err
}

// newID returns 12 random hex digits.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
