package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"cairn/abi"
	"cairn/checkpoint"
	"cairn/sandbox"
)

// callResult is what one tool call came to: the text the model reads, and
// whether that text reports a failure.
type callResult struct {
	call     checkpoint.ToolCall
	output   string
	isError  bool
	duration time.Duration
	stderr   string
}

// message is the tool message that answers the call.
func (r callResult) message() checkpoint.Message {
	return checkpoint.Message{Role: checkpoint.RoleTool, Text: r.output, CallID: r.call.ID,
		ToolName: r.call.Name, IsError: r.isError}
}

// runCall runs one call to the end. It never returns an error: whatever goes
// wrong — an unknown tool, bad arguments, a module that traps, loops or
// writes garbage — becomes an error result the model can read, and the run
// goes on.
func (ts *toolset) runCall(ctx context.Context, workspace string, c checkpoint.ToolCall) callResult {
	start := time.Now()
	res := callResult{call: c}
	out, stderr, err := ts.invoke(ctx, workspace, c)
	res.duration, res.stderr = time.Since(start), stderr
	if err != nil {
		res.output, res.isError = err.Error(), true
		return res
	}
	res.output = out
	return res
}

func (ts *toolset) invoke(ctx context.Context, workspace string, c checkpoint.ToolCall) (string, string, error) {
	t, ok := ts.tools[c.Name]
	if !ok {
		return "", "", fmt.Errorf("there is no tool %q; the tools are: %s", c.Name, ts.names())
	}
	if t.broken != nil {
		return "", "", t.broken
	}
	input, err := t.schema.check(c.Input)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", c.Name, err)
	}
	req := abi.Request{ABI: abi.Version, Tool: c.Name, CallID: c.ID, Input: input, Workspace: abi.WorkspaceDir}
	r, err := t.module.Call(ctx, t.policy(workspace), req)
	stderr := string(r.Stderr)
	if err != nil {
		return "", stderr, fmt.Errorf("tool %s failed: %s", c.Name, describeFailure(err))
	}
	if r.Response.Error != "" {
		return "", stderr, errors.New(r.Response.Error)
	}
	return r.Response.Output, stderr, nil
}

// describeFailure turns a sandbox error into a sentence for the model.
func describeFailure(err error) string {
	switch {
	case errors.Is(err, sandbox.ErrDeadline):
		return "it ran past its time limit and was stopped (" + err.Error() + ")"
	case errors.Is(err, context.Canceled):
		return "the run was cancelled while it ran"
	default:
		return err.Error()
	}
}

// runCalls runs a turn's calls concurrently and returns their results in
// the order the model asked for them. start and end are called as each
// call begins and ends, from the call's goroutine; they must be safe for
// concurrent use.
func (ts *toolset) runCalls(ctx context.Context, workspace string, calls []checkpoint.ToolCall,
	start func(checkpoint.ToolCall), end func(callResult)) []callResult {
	results := make([]callResult, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start(c)
			results[i] = ts.runCall(ctx, workspace, c)
			end(results[i])
		}()
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
