package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"cairn/checkpoint"
	"cairn/guest/builtin"
	"cairn/host/model"
	"cairn/sandbox"
)

// Engine runs agents. It holds what the agents of one process share: the
// sandbox runtime, whose compiled modules are reused by every call. An
// Engine is safe for concurrent use by several runs.
type Engine struct {
	rt *sandbox.Runtime
}

// Config configures an Engine. The zero value compiles modules in memory
// only.
type Config struct {
	// CacheDir keeps compiled modules on disk between processes; it is
	// created private to the user.
	CacheDir string
}

// NewEngine starts an engine.
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	rt, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: cfg.CacheDir})
	if err != nil {
		return nil, fmt.Errorf("start sandbox runtime: %w", err)
	}
	return &Engine{rt: rt}, nil
}

// Close releases the engine's runtime. Runs must have returned.
func (e *Engine) Close(ctx context.Context) error { return e.rt.Close(ctx) }

// RunOptions says what to run.
type RunOptions struct {
	Agent *AgentFile
	// ID is the agent's id; a new one is made when empty.
	ID string
	// Workspace overrides the agent file's workspace directory.
	Workspace string
	// Prompt is the user's message that starts the run.
	Prompt string
	// Model overrides the agent file's model.
	Model *model.Spec
	// OnEvent receives every event of the run, in order. May be nil.
	OnEvent EventFunc
}

// Result is how a run ended.
type Result struct {
	Agent, Run string
	Status     Status
	// Reason says why a run paused or failed.
	Reason string
	// Rounds is the number of rounds the agent has committed in all.
	Rounds    int
	Usage     checkpoint.Usage
	ToolCalls int
	// Text is the model's last text.
	Text string
}

// ErrNoWorkspace is returned when neither the agent file nor the caller
// names a workspace.
var ErrNoWorkspace = errors.New("no workspace: set `workspace:` in the agent file or pass one")

// Run runs an agent until the model answers without tool calls, a limit
// pauses it, or ctx ends (which pauses it too).
//
// # Errors
//
// Errors that keep the run from starting: an agent file whose modules do
// not load or ask for more than granted, a missing workspace, a model that
// cannot be set up. Once the run has started, failures are reported in the
// Result and the run_end event instead.
func (e *Engine) Run(ctx context.Context, opts RunOptions) (*Result, error) {
	r, err := e.prepare(ctx, opts)
	if err != nil {
		return nil, err
	}
	r.emit(Event{Type: EventRunStart})
	for _, w := range r.tools.warnings {
		r.emit(Event{Type: EventWarning, Text: w})
	}
	r.messages = append(r.messages, checkpoint.Message{Role: checkpoint.RoleUser, Text: opts.Prompt})
	status, reason := r.loop(ctx)
	res := &Result{Agent: r.agentID, Run: r.id, Status: status, Reason: reason, Rounds: r.round,
		Usage: r.usage, ToolCalls: r.toolCalls, Text: r.final}
	r.emit(Event{Type: EventRunEnd, Status: status, Reason: reason, Round: r.round, Usage: &res.Usage})
	return res, nil
}

// prepare builds a run: its workspace, tools and model.
func (e *Engine) prepare(ctx context.Context, opts RunOptions) (*run, error) {
	af := opts.Agent
	ws := opts.Workspace
	if ws == "" {
		ws = af.WorkspaceDir()
	}
	if ws == "" {
		return nil, ErrNoWorkspace
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory", ws)
	}
	mods, err := loadModules(af)
	if err != nil {
		return nil, err
	}
	tools, err := newToolset(ctx, e.rt, af, mods)
	if err != nil {
		return nil, err
	}
	provider, err := openModel(af, opts.Model)
	if err != nil {
		return nil, err
	}
	id := opts.ID
	if id == "" {
		id = af.Name + "-" + newID()
	}
	return &run{agentID: id, id: "run-" + newID(), af: af, tools: tools, provider: provider,
		workspace: ws, startedAt: time.Now(), onEvent: opts.OnEvent}, nil
}

// loadModules reads every module the agent file names and its manifest.
func loadModules(af *AgentFile) ([]Module, error) {
	mods := make([]Module, 0, len(af.Tools))
	for _, ref := range af.Tools {
		wasm, err := readModule(af, ref)
		if err != nil {
			return nil, fmt.Errorf("tool module %s: %w", ref.Module, err)
		}
		m, err := readManifest(wasm)
		if err != nil {
			return nil, fmt.Errorf("tool module %s: %w", ref.Module, err)
		}
		mods = append(mods, Module{Ref: ref, Wasm: wasm, Manifest: m})
	}
	return mods, nil
}

// openModel opens the agent's model, or the one that overrides it.
func openModel(af *AgentFile, override *model.Spec) (model.Provider, error) {
	spec := af.Model
	if override != nil {
		spec = *override
	}
	if spec.Script != "" {
		spec.Script = af.Path(spec.Script)
	}
	p, err := model.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return p, nil
}

func builtinWasm() []byte { return builtin.Module }

// newID returns 12 random hex digits.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
