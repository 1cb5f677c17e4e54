package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// ResumeCommand is the command that continues agent: `cairn workflow
// resume ID` when a step of workflow ID runs it (see OfAgent) and the
// workflow has not recorded the step, else `cairn resume AGENT`.
func ResumeCommand(ctx context.Context, store checkpoint.Store, agent string) string {
	id, ok := OfAgent(ctx, store, agent)
	if !ok {
		return "cairn resume " + agent
	}
	step := strings.TrimPrefix(host.RootOf(ctx, store, agent), id+".")
	if rec, err := store.(checkpoint.Workflows).Workflow(id); err == nil {
		if _, done := rec.Step(step); done {
			return "cairn resume " + agent
		}
	}
	return "cairn workflow resume " + id
}

// OfAgent is the workflow whose step runs agent: the step's own agent, or
// a sub-agent in that agent's tree. Such an agent is continued by resuming
// the workflow (Resume, `cairn workflow resume ID`), which also records
// the step's output, and not by resuming the agent alone. ok is false for
// an agent no workflow of store runs, for a store that keeps no workflows,
// and when what links them cannot be read.
//
// A step's agent is linked to its workflow by its id, the workflow's id, a
// dot and a step's name (StepAgent), and by its correlation label, the
// workflow's id and its run's token (ID#RUN; the id alone for a workflow
// started by a cairn that wrote record version 1): an agent of that id
// that another run made is not the workflow's.
func OfAgent(ctx context.Context, store checkpoint.Store, agent string) (id string, ok bool) {
	ws, isWS := store.(checkpoint.Workflows)
	if !isWS {
		return "", false
	}
	root := host.RootOf(ctx, store, agent)
	rec, err := store.Read(root)
	if err != nil {
		return "", false
	}
	c := rec.State.Labels.Correlation
	id, _, _ = strings.Cut(c, "#")
	step, found := strings.CutPrefix(root, id+".")
	if id == "" || !found {
		return "", false
	}
	w, err := ws.Workflow(id)
	if err != nil || label(w) != c {
		return "", false
	}
	f, err := Parse(w.Flow, w.Dir)
	if err != nil {
		return "", false
	}
	for _, s := range f.Steps {
		if s.Name == step {
			return id, true
		}
	}
	return "", false
}

// UnkeptParent refuses to run by itself, or to fork, the agent of a
// delegation step (or a sub-agent under it) whose definition does not keep
// the step's parent file, as a cairn that did not keep it made: the parent
// file's approval rules and sandbox limits bound the agent while the
// workflow ran it, and the workflow's resume (Resume, `cairn workflow
// resume ID`) binds it by them again, where a resume of the agent alone,
// or of a fork, which copies its definition, could not. The workflow's
// record keeps the workflow file, not the parent file, which may have
// changed since: it is no copy of what bound the agent to give a fork. It
// is host.Config.UnkeptAbove for an engine that runs workflows; agent is
// a top-level agent whose definition keeps no agent file above it, and
// any other agent is let be.
//
// # Errors
//
// ErrUnkeptParent, saying which workflow's resume continues the agent.
func UnkeptParent(ctx context.Context, store checkpoint.Store, agent string) error {
	id, ok := OfAgent(ctx, store, agent)
	if !ok {
		return nil
	}
	rec, err := store.(checkpoint.Workflows).Workflow(id)
	if err != nil {
		return nil // OfAgent read it
	}
	f, err := Parse(rec.Flow, rec.Dir)
	if err != nil {
		return nil
	}
	name := strings.TrimPrefix(agent, id+".")
	for _, s := range f.Steps {
		if s.Name == name && s.Kind() == "delegate" {
			return fmt.Errorf("%w: agent %s runs step %s of workflow %s, a delegation from %s, and a cairn that did not keep %s with the agent made it: "+
				"run by itself or forked it would not meet the approval rules of %s, which only the workflow's resume reads again; "+
				"`cairn workflow resume %s` continues it under them, and the workflow run anew, `cairn workflow run --id NEW %s`, makes a step agent that keeps %s and forks with it",
				ErrUnkeptParent, agent, s.Name, id, s.Parent, s.Parent, s.Parent, id, cmp.Or(rec.File, "FLOW.yaml"), s.Parent)
		}
	}
	return nil
}

// ErrUnkeptParent: an agent of a delegation step that does not keep its
// parent file was to run by itself, or be forked (see UnkeptParent).
var ErrUnkeptParent = errors.New("step agent refused")
