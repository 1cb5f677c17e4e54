package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"go.yaml.in/yaml/v3"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// job is a step ready to run: its prompt and input expanded.
type job struct {
	step    Step
	agent   string
	prompt  string
	input   any
	resumed bool // its agent exists and is continued
	fresh   bool // its agent exists but committed nothing: start it over
	// again says a tool step's agent ended with its call failed: it is
	// given a new prompt and makes the call again, in the same agent, so
	// that the earlier attempt stays in its journal and history.
	again bool
	// foreign says why an agent of the step's id is not the step's: an
	// agent another run, or another workflow, made under that id.
	foreign string
	// gone says the step had begun and its agent's stored state is no
	// longer in the store; unknown is the seal of a tool step's call that
	// was interrupted after it sent a request not safe to repeat. Either
	// keeps a resume from making the step again, unless retry says to.
	gone    bool
	unknown string
	retry   bool
}

// blocked says why a resume does not make the step again unless asked
// to; empty when it does.
func (j job) blocked(id string) string {
	switch {
	case j.retry:
		return ""
	case j.gone:
		return fmt.Sprintf("it had begun, but its agent %s's stored state is gone (removed or moved out of the store), so it is not made again: "+
			"what it did, and what it changed in the workspace, is unknown; put the agent back and `cairn workflow resume %s` continues it, "+
			"or look at the workspace and make the step anew with `cairn workflow resume --retry %s %s`", j.agent, id, j.step.Name, id)
	case j.unknown != "":
		return fmt.Sprintf("tool %s's call was interrupted after it sent a request that is not safe to repeat, so a resume does not make it again: %s "+
			"Once you have checked, `cairn workflow resume --retry %s %s` makes the call again (the first attempt stays in `cairn log %s`)",
			j.step.Tool, j.unknown, j.step.Name, id, j.agent)
	}
	return ""
}

func (r *runner) agentOf(s Step) string { return StepAgent(r.rec.ID, s.Name) }

// prepare expands a step's templates with the outputs so far and looks
// at what its agent left, if anything.
func (r *runner) prepare(s Step) job {
	j := job{step: s, agent: r.agentOf(s), input: expandInput(s.Input, r.outputs), retry: r.retrying(s.Name)}
	j.prompt = expand(s.Prompt, r.outputs)
	if s.Kind() == "delegate" {
		j.prompt = expand(s.Task, r.outputs)
	}
	rec, err := r.eng.Store().Read(j.agent)
	if err != nil {
		// A step that had begun has changed what its agent changed: with
		// its agent gone, that is unknown, and it is not made again.
		j.gone = errors.Is(err, checkpoint.ErrNotFound) && r.begun(s.Name)
		return j
	}
	if c := rec.State.Labels.Correlation; c != label(r.rec) {
		j.foreign = fmt.Sprintf("agent %s is there already and is not this workflow's: its correlation label is %q, "+
			"where this run of workflow %s gives its agents %q, so another run under the id %s, or no workflow, made it; "+
			"it is left as it was: %s, then resume the workflow (`cairn workflow resume %s`)",
			j.agent, c, r.rec.ID, label(r.rec), r.rec.ID, removeAdvice(r.eng.Store(), j.agent), r.rec.ID)
		return j
	}
	// An agent that committed nothing has nothing to resume from; a tool
	// step whose call failed makes it again (its error told the user to
	// fix the cause and resume), unless the call's effects are unknown.
	j.fresh = rec.State.Round == 0 && len(rec.Tail) == 0
	if s.Kind() == "tool" && !j.fresh && !rec.Interrupted() {
		if m, ok := toolResult(rec.State.Messages); ok && m.IsError {
			j.again, j.unknown = true, unknownSeal(m)
		}
	}
	j.resumed = !j.fresh && !j.again
	return j
}

// lastAttempt are the messages since the last prompt: a tool step's
// agent is prompted again for each attempt after its first, which had
// no prompt.
func lastAttempt(msgs []conversation.Message) []conversation.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conversation.RoleUser && !msgs[i].Note {
			return msgs[i+1:]
		}
	}
	return msgs
}

// toolResult is the result of a tool step's call in its last attempt.
func toolResult(msgs []conversation.Message) (conversation.Message, bool) {
	for _, m := range lastAttempt(msgs) {
		if m.Role == conversation.RoleTool {
			return m, true
		}
	}
	return conversation.Message{}, false
}

// unknownSeal is the text of m when it is the result resume wrote for a
// call that was in flight at a stop and may have taken effect beyond the
// workspace, else empty. Resume marks such a seal (EffectsUnknown); a seal
// journaled before the mark existed is known by its words alone
// (host.EffectsUnknownSeal), which are read only as that fallback, and
// only of a failed call's result, as every seal is: a tool's output may
// quote them.
func unknownSeal(m conversation.Message) string {
	if m.EffectsUnknown || m.IsError && host.EffectsUnknownSeal(m.Text) {
		return m.Text
	}
	return ""
}

// runStep runs, resumes or re-reads a step's agent and reads the step's
// output from the agent's committed state. A step whose agent another
// process holds pauses, as a delegation to a held sub-agent does: nothing
// failed, and a resume continues it once that process lets go.
//
// A step is marked begun in the workflow's record, durably, once its
// agent is made and before anything of it runs: as its run starts (the
// run_start event, which a run emits before its first model turn), or,
// for an agent that exists unmarked, before it is continued. A mark made
// before the agent was made would be left by a stop between the two,
// and the step taken for one whose agent is gone. A step that had begun
// and whose agent is gone is not made again (see job.blocked), and one
// whose agent's stored state vanishes while it runs fails saying so.
func (r *runner) runStep(ctx context.Context, j job) outcome {
	o := outcome{step: j.step, stop: Stop{Step: j.step.Name, Agent: j.agent}}
	if j.foreign != "" {
		return o.end(checkpoint.StatusFailed, j.foreign)
	}
	if why := j.blocked(r.rec.ID); why != "" {
		o.stop.Retry = true
		return o.end(checkpoint.StatusFailed, why)
	}
	existed := r.eng.Store().Exists(j.agent)
	var err error
	switch {
	case j.fresh && r.begun(j.step.Name):
		// It began nothing (no round, no call), and is made over: a stop
		// between its removal and its making finds it never began.
		err = r.setBegun(j.step.Name, false)
	case existed && !j.fresh && !r.begun(j.step.Name): // made by a run that kept no marks
		err = r.setBegun(j.step.Name, true)
	}
	if err != nil {
		return o.end(checkpoint.StatusFailed, fmt.Sprintf("agent %s could not go on: %v", j.agent, err))
	}
	started := time.Now().UTC()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var markErr error
	res, err := r.runAgent(ctx, j, func(ev host.Event) {
		// The agent is made, and its run starts: nothing of it has run
		// yet. The step is marked begun before anything does.
		if ev.Type == host.EventRunStart && ev.Agent == j.agent && !r.begun(j.step.Name) {
			if markErr = r.setBegun(j.step.Name, true); markErr != nil {
				stop(markErr)
			}
		}
		r.event(ev)
	})
	if markErr != nil {
		return o.end(checkpoint.StatusFailed, fmt.Sprintf("agent %s stopped: %v", j.agent, markErr))
	}
	if !r.eng.Store().Exists(j.agent) && (existed || err == nil || errors.Is(err, checkpoint.ErrLockLost) || errors.Is(err, checkpoint.ErrNotFound)) {
		// Its store went from under it (removed, or moved aside): no other
		// process runs it, whatever the lock's loss said.
		o.stop.Retry = true
		return o.end(checkpoint.StatusFailed, r.vanished(j))
	}
	if err != nil {
		return o.notStarted(err)
	}
	if res.Status == host.StatusAwaitingApproval && !res.StoppedBySubAgent() {
		o.stop.Calls = r.pending(ctx, j.agent)
	}
	if res.Status != host.StatusDone {
		return o.end(checkpoint.Status(res.Status), r.stepReason(j, res))
	}
	out, err := r.output(j)
	if err != nil {
		o.stop.InFlow = errors.Is(err, errNotCalled)
		var unknown unknownError
		o.stop.Retry = errors.As(err, &unknown)
		return o.end(checkpoint.StatusFailed, err.Error())
	}
	o.status, o.done = checkpoint.StatusDone, &checkpoint.WorkflowStep{
		Name: j.step.Name, Agent: j.agent, Output: out, Started: started, Finished: time.Now().UTC()}
	return o
}

// vanished says why a step failed when its agent's stored state went
// from under it while it ran.
func (r *runner) vanished(j job) string {
	id := r.rec.ID
	return fmt.Sprintf("agent %s's stored state vanished while it ran (its directory was removed or moved aside), so it could not go on, "+
		"and what it changed in the workspace is unknown; put it back and `cairn workflow resume %s` continues it, "+
		"or look at the workspace and make the step anew with `cairn workflow resume --retry %s %s` (a plain resume does not make it again)",
		j.agent, id, j.step.Name, id)
}

// stepReason is why the step's agent stopped. When a sub-agent of its
// tree stopped it, the reason ends with the resume of the tree's root, the
// step's agent; a workflow's step is continued by the workflow's resume
// instead (which resumes that agent and records the step's output), so
// the reason names that one alone. A limit of the step's tree that
// stopped the sub-agent is raised by the workflow's resume too, whose
// --max-* flags reach the step's agent, not by a resume of that agent
// alone, which would leave the step unrecorded; so is a limit of the
// agent file kept above the step's agent (a delegation step's `parent:`),
// which stopped the agent itself.
func (r *runner) stepReason(j job, res *host.Result) string {
	reason := res.Reason
	if res.StoppedBySubAgent() {
		reason = strings.ReplaceAll(reason, "`cairn resume "+j.agent+"`", "`cairn workflow resume "+r.rec.ID+"`")
	}
	plain := "; `cairn workflow resume " + r.rec.ID + "` resumes it"
	for _, flag := range []string{"--max-tokens", "--max-cost", "--max-time"} {
		limit := "resume " + j.agent + " with " + flag + " to allow more"
		if strings.Contains(reason, limit) {
			// A plain resume would stop at the same limit.
			reason = strings.Replace(strings.ReplaceAll(reason, limit, fmt.Sprintf("resume the workflow with %s to allow more (`cairn workflow resume %s` with that flag)",
				flag, r.rec.ID)), plain, "", 1)
		}
	}
	return reason
}

// notStarted is the outcome of a step whose agent did not start, or
// stopped, for err: paused when another process holds the agent or took
// it over, else failed.
func (o outcome) notStarted(err error) outcome {
	if errors.Is(err, checkpoint.ErrLockLost) {
		// It ran, and another process took its agent over: the error says
		// by whom, and that nothing more of this run was committed.
		o.stop.Held = err
		return o.end(checkpoint.StatusPaused, err.Error())
	}
	if errors.Is(err, checkpoint.ErrLocked) {
		o.stop.Held = err
		return o.end(checkpoint.StatusPaused, fmt.Sprintf("agent %s is held by %s: resume the workflow once it is released",
			o.stop.Agent, heldBy(err)))
	}
	// A tool step's agent is made of the workflow file alone: a grant it
	// refuses is the file's, which a resume cannot change; so is an input
	// its templates expanded to, from the outputs the workflow keeps.
	var expanded templateInputError
	o.stop.InFlow = o.step.Kind() == "tool" && errors.Is(err, host.ErrGrant) || errors.Is(err, errToolWorkspace) || errors.As(err, &expanded)
	return o.end(checkpoint.StatusFailed, err.Error())
}

// pending are the ids of the calls of agent that await a decision.
func (r *runner) pending(ctx context.Context, agent string) []string {
	reqs, err := host.Pending(context.WithoutCancel(ctx), r.eng.Store(), agent)
	if err != nil {
		return nil // the reason still names them
	}
	ids := make([]string, len(reqs))
	for i, q := range reqs {
		ids[i] = q.Call.ID
	}
	return ids
}

// heldBy says who holds a lock, from the checkpoint.ErrLocked err.
func heldBy(err error) string {
	var held *checkpoint.LockedError
	if !errors.As(err, &held) || held.Holder.PID == 0 {
		return "another process"
	}
	h := held.Holder
	return fmt.Sprintf("process %d on %s (run %s, started %s)", h.PID, h.Host, h.Run, h.Started.Local().Format(time.RFC3339))
}

// runAgent starts the step's agent, or continues it from its boundary. An
// agent whose run had ended done is not run again. A tool step's agent
// whose call failed is prompted again, so the earlier attempt stays in
// its journal.
func (r *runner) runAgent(ctx context.Context, j job, onEvent host.EventFunc) (*host.Result, error) {
	if j.resumed {
		rec, err := r.eng.Store().Read(j.agent)
		if err != nil {
			return nil, err
		}
		if !rec.Interrupted() && rec.State.Status == checkpoint.StatusDone {
			return &host.Result{Agent: j.agent, Status: host.StatusDone}, nil
		}
		// A tool step's one call, if a crash sealed it, applied nothing:
		// replay makes it again instead of ending the step with the seal.
		strategy := host.StrategySeal
		if j.step.Kind() == "tool" {
			strategy = host.StrategyReplay
		}
		// An agent step whose agent failed told the user to fix the cause
		// and resume: its agent file and script are read again, as
		// `cairn resume --upgrade` reads them, so the fix is taken up.
		upgrade := j.step.Kind() == "agent" && !rec.Interrupted() && rec.State.Status == checkpoint.StatusFailed
		// A delegation step's agent is bound by its parent file's approval
		// rules and limits, continued as when it was made: its definition
		// keeps the file, and the file on disk, which may have changed or
		// gone since, is not read; one a cairn that did not keep it made
		// is given the file as it is now.
		var above *host.AgentFile
		if j.step.Kind() == "delegate" && len(rec.State.Definition.Above) == 0 {
			if above, err = host.LoadAgentFile(r.flow.Path(j.step.Parent)); err != nil {
				return nil, err
			}
		}
		return r.eng.Resume(ctx, host.ResumeOptions{ID: j.agent, Strategy: strategy, OnEvent: onEvent, AutoDeny: r.opts.AutoDeny,
			Limits: r.opts.Limits, Upgrade: upgrade, Above: above, UpgradeAdvice: r.upgradeAdvice(j)})
	}
	ws := r.flow.workspace(j.step, r.rec.Workspace)
	af, err := r.flow.agentFile(j.step, j.input, ws)
	if err != nil {
		return nil, err
	}
	if err := r.checkExpanded(af, j); err != nil {
		return nil, err
	}
	prompt := j.prompt
	if j.again {
		prompt = againPrompt
	}
	return r.eng.Run(ctx, host.RunOptions{Agent: af, ID: j.agent, Fresh: j.fresh, Prompt: prompt,
		Workspace: ws, OnEvent: onEvent, AutoDeny: r.opts.AutoDeny,
		Labels: checkpoint.Labels{Correlation: label(r.rec)}})
}

// upgradeAdvice says, in the warning that the agent file of the step's
// agent changed since it started, how to take up the new one: a workflow's
// resume goes on with the file the agent started with. An agent step's
// agent is resumed by itself with --upgrade, and the workflow's resume
// then records the step. A delegation step's agent goes on with the
// definition its delegation from the parent file made: the workflow is
// run anew to take up a new one.
func (r *runner) upgradeAdvice(j job) string {
	id := r.rec.ID
	if j.step.Kind() == "agent" {
		return fmt.Sprintf("`cairn resume --upgrade %s` continues the step's agent with it, then `cairn workflow resume %s` records the step", j.agent, id)
	}
	return fmt.Sprintf("step %s's delegation from %s was checked with that one; to run the new one, "+
		"start the workflow anew under another id: `cairn workflow run --id NEW %s`", j.step.Name, j.step.Parent, cmp.Or(r.rec.File, "FLOW.yaml"))
}

// againPrompt prompts a tool step's agent to make its call again.
const againPrompt = "Make the call again."

// event passes an agent's event on, one at a time.
func (r *runner) event(ev host.Event) {
	if r.opts.OnEvent == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts.OnEvent(ev)
}

// workspace is the step's workspace, else flowWS, the workflow's; empty
// leaves the agent file's.
func (f *Flow) workspace(s Step, flowWS string) string {
	if s.Workspace != "" {
		return f.Path(s.Workspace)
	}
	return flowWS
}

// errToolWorkspace: a tool step has no workspace.
var errToolWorkspace = errors.New("a tool step needs a workspace: set workspace: in the workflow file or the step")

// agentFile is the agent a step runs, in the workspace ws; a tool step's
// is made with input.
func (f *Flow) agentFile(s Step, input any, ws string) (*host.AgentFile, error) {
	switch s.Kind() {
	case "agent":
		return host.LoadAgentFile(f.Path(s.Agent))
	case "delegate":
		parent, err := host.LoadAgentFile(f.Path(s.Parent))
		if err != nil {
			return nil, err
		}
		return parent.SubAgentFile(s.Delegate)
	}
	if ws == "" {
		return nil, errToolWorkspace
	}
	return f.toolAgent(s, input)
}

// missingModule: a tool step's module is not there. It is
// host.ErrMissing, whose words are an agent file's: a tool step's module
// is named by the workflow file, and its error says so.
type missingModule struct{ error }

func (e missingModule) Is(target error) bool { return target == host.ErrMissing }
func (e missingModule) Unwrap() error        { return e.error }

// toolAgent is the agent of a tool step: the one module, offering the one
// tool, and a script that calls it once with the input and then stops.
func (f *Flow) toolAgent(s Step, in any) (*host.AgentFile, error) {
	if in == nil {
		in = map[string]any{}
	}
	input, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("input: %w", err)
	}
	// A module built into cairn is named as an agent file names it; any
	// other is a file, beside the workflow file unless absolute.
	module := s.Module
	if !host.EmbeddedModule(module) {
		module = f.Path(module)
		if _, err := os.Stat(module); errors.Is(err, fs.ErrNotExist) {
			return nil, missingModule{fmt.Errorf("tool module %s: %w; fix the step's module: in the workflow file, or make it", s.Module, err)}
		}
	}
	tool := map[string]any{"module": module, "only": []string{s.Tool}}
	if s.Grant != nil {
		// Through JSON, whose tags leave out what the grant does not set
		// (an empty imports: would allow no import at all).
		var grant map[string]any
		b, err := json.Marshal(s.Grant)
		if err == nil {
			err = json.Unmarshal(b, &grant)
		}
		if err != nil {
			return nil, fmt.Errorf("grant: %w", err)
		}
		tool["grant"] = grant
	}
	src, err := yaml.Marshal(map[string]any{"name": s.Name, "model": map[string]any{"provider": "script"},
		"tools": []any{tool}, "limits": map[string]any{"max_rounds": 2}})
	if err != nil {
		return nil, err
	}
	af, err := host.ParseAgentFile(src, f.Dir)
	if err != nil {
		return nil, fmt.Errorf("tool step: %w", err)
	}
	// The call and the answer after it, once for each attempt: a script
	// plays the turn its conversation has reached, so the agent prompted
	// again (job.again) makes the call again, and a resume of it, from
	// its stored script, finds the same turns.
	var turns []any
	for range toolAttempts {
		turns = append(turns, map[string]any{"tool_calls": []any{map[string]any{"name": s.Tool, "input_json": string(input)}}},
			map[string]any{"text": "called " + s.Tool})
	}
	af.Model.ScriptData, err = yaml.Marshal(map[string]any{"turns": turns})
	return af, err
}

// toolAttempts bounds the attempts of a tool step's call: its first and
// those a resume makes after it failed.
const toolAttempts = 20

// errNotCalled: a tool step's agent ended without calling its tool.
var errNotCalled = errors.New("was not called")

// unknownError: a tool step's call was sealed with its effects unknown,
// and the step is not made again unless asked to.
type unknownError string

func (e unknownError) Error() string { return string(e) }

// attempts counts a tool step's attempts: its first, and one for each
// prompt after it.
func attempts(msgs []conversation.Message) int {
	n := 1
	for _, m := range msgs {
		if m.Role == conversation.RoleUser && !m.Note {
			n++
		}
	}
	return n
}

// output reads a completed step's output from its agent's committed
// state: a tool step's is its call's result in its last attempt, any
// other the model's last text.
func (r *runner) output(j job) (string, error) {
	rec, err := r.eng.Store().Read(j.agent)
	if err != nil {
		return "", err
	}
	msgs := rec.State.Messages
	if j.step.Kind() == "tool" {
		m, ok := toolResult(msgs)
		switch {
		case !ok && attempts(msgs) > toolAttempts:
			return "", fmt.Errorf("tool %s's call was made %d times, as often as a tool step makes it: run the workflow anew", j.step.Tool, toolAttempts)
		case !ok:
			return "", fmt.Errorf("tool %s %w: is it a tool of module %s?", j.step.Tool, errNotCalled, j.step.Module)
		case unknownSeal(m) != "":
			j.unknown, j.retry = m.Text, false
			return "", unknownError(j.blocked(r.rec.ID))
		case m.IsError:
			return "", fmt.Errorf("tool %s failed: %s", j.step.Tool, m.Text)
		}
		return m.Text, nil
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conversation.RoleAssistant && len(msgs[i].ToolCalls) == 0 {
			return msgs[i].Text, nil
		}
	}
	return "", nil
}
