package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// callResult is what one tool call came to: the text the model reads,
// whether that text reports a failure, and what the call changed in its
// overlay of the workspace.
type callResult struct {
	call     conversation.ToolCall
	output   string
	isError  bool
	duration time.Duration
	stderr   string
	// effects are the call's changes, staged in staging until applied;
	// reads are the workspace files it read.
	effects overlay.Effects
	staging string
	reads   []string
	// sight is what a sandboxed call ran with and saw; recording, what
	// the run keeps of it for `cairn verify` (verify_record.go).
	sight     *sight
	recording *conversation.Recording
	// net is the call's network exchanges.
	net []conversation.Exchange
	// How the result became durable: journaled as the call finished;
	// held for the round's settlement; interrupted, never journaled
	// (resume seals the call). changed says settling changed it;
	// conflict, that some of its changes were refused. endLater: the
	// call staged changes, so its tool_end waits for the round's
	// settlement to say whether they stood; unsettled, that the run
	// stopped before that settlement, and its tool_end says so.
	journaled, held, interrupted, changed, conflict, endLater, unsettled bool
	// native is what a native tool's call came to besides its text; stop,
	// that it stopped the run instead (see stopError).
	native *nativeResult
	stop   *stopError
}

// workspaceView is where a round's calls work: the workspace, and where
// each call's changes are staged.
type workspaceView struct {
	dir     string
	staging func(call string) string
	// net journals a call's network exchanges; nil gives calls no
	// network.
	net func(conversation.ToolCall, sandbox.Net) *netJournal
}

// runCall runs one call to the end. It never returns an error: whatever goes
// wrong — an unknown tool, bad arguments, a module that traps, loops or
// writes garbage — becomes an error result the model can read, and the run
// goes on.
func (ts *toolset) runCall(ctx context.Context, ws workspaceView, c conversation.ToolCall) callResult {
	start := time.Now()
	res := callResult{call: c}
	out, err := ts.invoke(ctx, ws, c, &res)
	res.duration = time.Since(start)
	if err != nil {
		res.output, res.isError = err.Error(), true
		return res
	}
	res.output = out
	return res
}

func (ts *toolset) invoke(ctx context.Context, ws workspaceView, c conversation.ToolCall, res *callResult) (string, error) {
	t, ok := ts.tools[c.Name]
	if !ok {
		return "", fmt.Errorf("there is no tool %q; the tools are: %s", c.Name, ts.names())
	}
	if t.remote != nil {
		return t.callRemote(ctx, c)
	}
	if t.native != nil {
		return ts.callNative(ctx, t, c, res)
	}
	mod, err := t.module.Wait(ctx)
	if ctx.Err() != nil {
		// A run that commits what its context stopped (a session) keeps
		// this as the call's result.
		return "", fmt.Errorf("tool %s was stopped before it started, while its module was loading (%v); it changed nothing", c.Name, context.Cause(ctx))
	} else if err != nil {
		return "", doesNotLoad(t.ref, err)
	}
	input, err := t.schema.check(c.Input)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	p := t.policy(ws.dir)
	ov, err := t.overlay(&p, ws, c.ID)
	if err != nil {
		return "", fmt.Errorf("tool %s: stage its changes: %w", c.Name, err)
	}
	j := ws.journalNet(&p, c)
	req := abi.Request{ABI: abi.Version, Tool: c.Name, CallID: c.ID, Input: input, Workspace: abi.WorkspaceDir}
	r, err := mod.Call(ctx, p, req)
	res.net = j.exchanges()
	res.stderr = string(r.Stderr)
	res.sight = t.sightOf(mod, p, ov)
	if ov != nil {
		res.staging, res.reads = ws.staging(c.ID), ov.Reads()
		if err == nil && r.Response.Error == "" {
			res.effects, err = ov.Effects()
		}
		ov.Close()
	}
	if err != nil {
		return "", fmt.Errorf("tool %s failed: %s", c.Name, describeFailure(ctx, err))
	}
	if r.Response.Error != "" {
		return "", errors.New(r.Response.Error)
	}
	return r.Response.Output, nil
}

// stages reports whether a call of the named tool stages changes to the
// workspace, and so needs a staging directory: its policy (tool.policy)
// mounts the workspace writable, which it does for a tool that asks to
// write it, and for no other. Its policy is not built for the question.
func (ts *toolset) stages(name string) bool {
	t, ok := ts.tools[name]
	return ok && t.spec.Needs.Workspace == abi.AccessReadWrite
}

// overlay mounts the workspace on an overlay of the call's own: a tool
// that may change it has its changes staged until they are applied, and
// every tool's reads are listed for the file pool. A tool that may only
// read stages nothing, so its call makes no staging directory.
func (t *tool) overlay(p *sandbox.Policy, ws workspaceView, call string) (*overlay.Overlay, error) {
	if len(p.Mounts) == 0 || p.Mounts[0].GuestPath != abi.WorkspaceDir {
		return nil, nil
	}
	staging := ""
	if !p.Mounts[0].ReadOnly {
		staging = ws.staging(call)
		if err := os.MkdirAll(filepath.Dir(staging), 0o700); err != nil {
			return nil, err
		}
	}
	ov, err := overlay.New(ws.dir, staging)
	if err != nil {
		return nil, err
	}
	p.Mounts[0] = sandbox.Mount{GuestPath: abi.WorkspaceDir, Overlay: ov, ReadOnly: p.Mounts[0].ReadOnly}
	return ov, nil
}

// describeFailure turns a sandbox error of a call whose context was ctx
// into a sentence for the model.
func describeFailure(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, sandbox.ErrDeadline):
		return "it ran past its time limit and was stopped (" + err.Error() + "); the agent file's sandbox: {timeout}, or its module's limits:, sets the limit"
	case errors.Is(err, sandbox.ErrOutputLimit):
		return err.Error() + "; the agent file's sandbox: {output}, or its module's limits:, sets the cap"
	case errors.Is(err, context.Canceled):
		return stoppedWhy(ctx)
	case errors.Is(err, overlay.ErrNoSpace):
		return err.Error() + "; none of its changes were kept"
	case errors.Is(err, overlay.ErrNameLimit):
		return err.Error() + "; none of its changes were kept (no setting raises this bound: change fewer paths, or paths with shorter names, in one call)"
	case errors.Is(err, overlay.ErrSeenLimit):
		return err.Error() + "; none of its changes were kept (no setting raises this bound: read, describe or list fewer paths of the workspace in one call)"
	case errors.Is(err, overlay.ErrStagingLimit):
		return err.Error() + "; none of its changes were kept (the agent file's sandbox: {staging, staged_paths} set the limits)"
	case errors.Is(err, sandbox.ErrMemoryLimit):
		return err.Error() + " (the agent file's sandbox: {memory} sets the limit)"
	case errors.Is(err, sandbox.ErrRequestTooLarge):
		return err.Error() + " (the agent file's sandbox: {stdin} sets the limit)"
	default:
		return err.Error()
	}
}

// stoppedWhy says why a call whose context, ctx, ended while it ran was
// stopped: the cause its context was ended with, when one was given (an
// MCP session's client that cancelled the call, went away or ended its
// session; a server stopped by a signal), so that a reader can tell what
// happened and whether to call it again.
func stoppedWhy(ctx context.Context) string {
	why := "the run was cancelled while it ran"
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		why = fmt.Sprintf("it was stopped while it ran, because %v", cause)
	}
	return why + "; none of its changes to the workspace were kept"
}

// runCalls runs a turn's calls concurrently, each in the context ctxOf
// gives it, and returns their results in the order the model asked for
// them. start and end are called as each call begins and ends, from the
// call's goroutine; they must be safe for concurrent use, and end may mark
// the result it is given. The last call runs on the caller's goroutine, so
// a turn of one call starts none: starting one wakes another core, which a
// call of a few hundred µs pays for.
func (ts *toolset) runCalls(ctxOf func(conversation.ToolCall) context.Context, ws workspaceView, calls []conversation.ToolCall,
	start func(conversation.ToolCall), end func(*callResult)) []callResult {
	results := make([]callResult, len(calls))
	run := func(i int) {
		start(calls[i])
		results[i] = ts.runCall(ctxOf(calls[i]), ws, calls[i])
		end(&results[i])
	}
	var wg sync.WaitGroup
	for i := range len(calls) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(i)
		}()
	}
	if len(calls) > 0 {
		run(len(calls) - 1)
	}
	wg.Wait()
	return results
}

func (ts *toolset) names() string {
	names := make([]string, len(ts.specs))
	for i, s := range ts.specs {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}
