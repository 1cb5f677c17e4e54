package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

// Host-native tools are the tools the host carries out itself rather than
// a wasm module: delegate (a task handed to a sub-agent) and todo_write
// (the agent's task list). The model sees them beside the module's tools;
// the loop treats a call of one as any call: it meets the approval rules,
// is journaled as executing (durably) before it runs, its result is
// durable as it finishes, a call in flight when cairn stopped is sealed by
// resume, and a finished one is kept and never run again.
//
// A native tool's result may carry, besides its text, what the round
// settles with it:
//
//	nativeResult.Todos   replaces the agent's task list when the round
//	                     commits (the list is part of the state)
//	nativeResult.Usage   tokens and cost spent on its behalf (a child's),
//	                     added to the agent's when the round commits
//	nativeResult.Effect  an effect outside the workspace and the state,
//	                     which the tool's Settle applies once the result is
//	                     durable, before the round commits; a crash between
//	                     the two makes resume apply it again, so Settle
//	                     must be idempotent (a keyed put, not an append)
//
// All three are journaled in the call's result record, so a result kept
// by resume carries them too.
//
// To add one: write a type with Spec and Call (and Settle if its results
// carry an Effect, ResumesInFlight if a call in flight should run again
// on resume instead of being sealed), and a func(*AgentFile) ([]nativeTool,
// error) that says which agents get it; add that func to natives.

// nativeTool is a tool the host carries out itself.
type nativeTool interface {
	// Spec is the tool as the model sees it; its InputSchema is checked
	// against every call's input before Call.
	Spec() model.Tool
	// Call carries out one call. An error becomes an error result the
	// model reads, unless it is a *stopError.
	Call(ctx context.Context, c *nativeCall) (nativeResult, error)
}

// nativeSettler is a nativeTool whose results carry an Effect.
type nativeSettler interface {
	nativeTool
	// Settle applies a result's Effect. It is called once the result is
	// durable, and again by resume if cairn stopped before the record
	// saying it was applied; it must be idempotent.
	Settle(ctx context.Context, c *nativeCall, effect []byte) error
}

// nativeResumer is a nativeTool whose calls in flight when cairn stopped
// are run by resume, not sealed: those that had started again, the tool
// itself keeping the work they had done (a delegation resumes its child)
// and repeating none of it, and those that had not yet started for the
// first time (they meet the approval rules as they would have).
type nativeResumer interface {
	nativeTool
	ResumesInFlight() bool
}

// nativeCall is one call of a native tool and what it may use.
type nativeCall struct {
	// Agent is the id of the agent making the call; Round its round.
	Agent string
	Round int
	Call  conversation.ToolCall
	// Input is the call's input, checked against the tool's schema.
	Input json.RawMessage
	// Store is the store the agent is kept in.
	Store checkpoint.Store
	// State is the agent's state at its last boundary; read it only.
	State *checkpoint.State

	run *run
}

// nativeResult is what a call of a native tool came to.
type nativeResult struct {
	Output  string
	IsError bool
	Todos   *checkpoint.TodoList
	Usage   *conversation.Usage
	Effect  []byte

	child string // the sub-agent a delegation's result is from
}

// stopError, returned by a native tool's Call, stops the agent's run
// without a result for the call: the run ends with Status and Reason,
// the call's round stays open, and resume runs the call again (the tool
// must be a nativeResumer). A delegation returns one when its child
// pauses, so that the tree pauses with it.
type stopError struct {
	Status Status
	Reason string
	// Stopped is what ended the calls in flight that the stop leaves
	// without a result (checkpoint.StoppedMaxTime), journaled for each so
	// that its seal says so (see keepHeld); "" for a stop that ended none.
	Stopped string
}

func (e *stopError) Error() string { return e.Reason }

// natives lists, for each kind of native tool, the func that says which
// of them an agent file gets.
var natives = []func(*AgentFile) ([]nativeTool, error){
	todoTools,
	delegateTools,
	memoryTools,
}

// addNatives offers the native tools the agent file gets.
func (ts *toolset) addNatives(af *AgentFile) error {
	for _, tools := range natives {
		nts, err := tools(af)
		if err != nil {
			return err
		}
		for _, nt := range nts {
			if err := ts.addNative(nt); err != nil {
				return err
			}
		}
	}
	return nil
}

func (ts *toolset) addNative(nt nativeTool) error {
	spec := nt.Spec()
	if _, dup := ts.tools[spec.Name]; dup {
		return fmt.Errorf("tool %q is offered by a module and by cairn itself", spec.Name)
	}
	sch, err := compileSchema(spec.Name, string(spec.InputSchema))
	if err != nil {
		return fmt.Errorf("tool %q: %w", spec.Name, err)
	}
	ts.tools[spec.Name] = &tool{spec: abi.Tool{Name: spec.Name, Description: spec.Description,
		InputSchema: string(spec.InputSchema)}, schema: sch, native: nt}
	ts.specs = append(ts.specs, spec)
	return nil
}

// callNative carries out a call of a native tool for the toolset's run.
func (ts *toolset) callNative(ctx context.Context, t *tool, c conversation.ToolCall, res *callResult) (string, error) {
	input, err := t.schema.check(c.Input)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	nc := ts.run.nativeCall(c, input)
	out, err := t.native.Call(ctx, nc)
	var stop *stopError
	if errors.As(err, &stop) {
		res.stop = stop
		return "", err
	}
	if err != nil {
		return "", err
	}
	res.native = &out
	if out.IsError {
		return "", errors.New(out.Output)
	}
	return out.Output, nil
}

// nativeCall is what a native tool of r is given for call c.
func (r *run) nativeCall(c conversation.ToolCall, input string) *nativeCall {
	st := r.state()
	return &nativeCall{Agent: r.agentID, Round: st.Round + 1, Call: c, Input: json.RawMessage(input),
		Store: r.store, State: st, run: r}
}

// resumesInFlight reports whether resume runs a call of the named tool
// again, rather than sealing it, when it was in flight.
func (ts *toolset) resumesInFlight(name string) bool {
	t, ok := ts.tools[name]
	if !ok || t.native == nil {
		return false
	}
	nr, ok := t.native.(nativeResumer)
	return ok && nr.ResumesInFlight()
}

// A nativeBeginner tells, of a call journaled executing when a run
// stopped, whether its work had begun: a call journaled executing may
// have waited for its turn (a delegation for one of max_parallel slots)
// and done nothing.
type nativeBeginner interface {
	Begun(r *run, c conversation.ToolCall) bool
}

// begun reports whether a call journaled executing had begun its work,
// as far as its tool can tell; false for a tool that cannot.
func (ts *toolset) begun(r *run, c conversation.ToolCall) bool {
	t, ok := ts.tools[c.Name]
	if !ok || t.native == nil {
		return false
	}
	nb, ok := t.native.(nativeBeginner)
	return ok && nb.Begun(r, c)
}

// settleNative applies the Effect of a native call's durable result, if it
// has one, and journals that it did. Nothing is synced here.
func (r *run) settleNative(ctx context.Context, round int, res callResult) error {
	if res.native == nil || len(res.native.Effect) == 0 {
		return nil
	}
	t := r.tools.tools[res.call.Name]
	s, ok := t.native.(nativeSettler)
	if !ok {
		return fmt.Errorf("call %s: tool %s has an effect to settle and no Settle", res.call.ID, res.call.Name)
	}
	if err := s.Settle(ctx, r.nativeCall(res.call, res.call.Input), res.native.Effect); err != nil {
		return fmt.Errorf("settle call %s of %s: %w; `cairn resume %s` tries again", res.call.ID, res.call.Name, err, r.agentID)
	}
	return r.log.Append(checkpoint.Record{Type: checkpoint.RecApplied, Time: now(), Round: round,
		Call: res.call.ID, Tool: res.call.Name})
}

// nativeOf is what a journaled result carries of a native call, or nil.
func nativeOf(r *checkpoint.Result) *nativeResult {
	if r.Todos == nil && r.Usage == nil && len(r.Native) == 0 {
		return nil
	}
	return &nativeResult{Output: r.Output, IsError: r.IsError, Todos: r.Todos, Usage: r.Usage, Effect: r.Native}
}

// stopOf is the first stopError of a round's calls, or nil.
func stopOf(results []callResult) error {
	for _, res := range results {
		if res.stop != nil {
			return res.stop
		}
	}
	return nil
}

// NativeModule is the ToolInfo.Module of the tools cairn carries out
// itself.
const NativeModule = "cairn"

// nativeInfo lists the native tools an agent file gets, as `cairn tools
// ls` shows them.
func nativeInfo(af *AgentFile) ([]ToolInfo, error) {
	var out []ToolInfo
	for _, tools := range natives {
		nts, err := tools(af)
		if err != nil {
			return nil, err
		}
		for _, nt := range nts {
			s := nt.Spec()
			out = append(out, ToolInfo{Module: NativeModule, Tool: abi.Tool{Name: s.Name, Description: s.Description,
				InputSchema: string(s.InputSchema)}})
		}
	}
	return out, nil
}
