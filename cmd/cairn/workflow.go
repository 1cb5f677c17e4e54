package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/plural"
)

// parallelDefault is what --parallel is when it is left out.
const parallelDefault = "the workflow file's max_parallel, else 4"

func workflowCommand() *cli.Command {
	return &cli.Command{
		Name:  "workflow",
		Usage: "run named steps with dependencies, each completed step journaled, and resume them after a crash",
		Subcommands: []*cli.Command{
			{
				Name: "run", Usage: "run a workflow file", ArgsUsage: "FLOW.yaml",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "id", Usage: "the workflow's id (default: its name and a random suffix)"},
					&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the directory the steps work in (default: the workflow file's workspace)"},
					&cli.IntFlag{Name: "parallel", Usage: "steps that run at once", DefaultText: parallelDefault},
					newStoreFlag(), newCacheFlag(), newJSONFlag(), newAutoDenyFlag(),
				},
				Action: workflowRunAction,
			},
			{
				Name: "resume", Usage: "continue a workflow: skip its completed steps, resume the interrupted ones, run the rest", ArgsUsage: "ID",
				Flags: slices.Concat([]cli.Flag{&cli.IntFlag{Name: "parallel", Usage: "steps that run at once", DefaultText: parallelDefault},
					&cli.StringSliceFlag{Name: "retry", Usage: "make `STEP` again though what its last attempt did is unknown " +
						"(its agent's stored state is gone, or its call may have taken effect): check first; repeatable"}},
					limitFlags("the resumed steps' agents'"), []cli.Flag{newStoreFlag(), newCacheFlag(), newJSONFlag(), newAutoDenyFlag()}),
				Action: workflowResumeAction,
			},
			{Name: "ls", Usage: "list the workflows in the store", Flags: []cli.Flag{newStoreFlag(), newListJSONFlag()}, Action: workflowLsAction},
			{Name: "show", Usage: "show a workflow's steps and their outputs", ArgsUsage: "ID", Flags: []cli.Flag{newStoreFlag(), newListJSONFlag()}, Action: workflowShowAction},
		},
	}
}

func workflowRunAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, errors.New("usage: cairn workflow run [--id ID] FLOW.yaml"))
	}
	if err := checkParallelFlag(c); err != nil {
		return err
	}
	f, err := workflow.Load(c.Args().First())
	if err != nil {
		return withCode(exitUsage, err)
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.close()
	opts := workflowOptions(c, c.String("id"))
	opts.ID, opts.Workspace = c.String("id"), c.String("workspace")
	res, err := workflow.Run(s.ctx, s.eng, f, opts)
	if errors.Is(err, workflow.ErrFlow) {
		err = fmt.Errorf("workflow file %s: %w", c.Args().First(), err)
	}
	if err != nil {
		return workflowError(err)
	}
	return workflowStatus(c, res)
}

func workflowResumeAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, errors.New("usage: cairn workflow resume [--retry STEP] ID"))
	}
	if err := checkParallelFlag(c); err != nil {
		return err
	}
	limits, err := limitsOf(c)
	if err != nil {
		return err
	}
	s, err := openSession(c)
	if err != nil {
		return err
	}
	defer s.close()
	opts := workflowOptions(c, c.Args().First())
	opts.Limits, opts.Retry = limits, c.StringSlice("retry")
	res, err := workflow.Resume(s.ctx, s.eng, c.Args().First(), opts)
	if errors.Is(err, workflow.ErrFinished) {
		// As `cairn resume` of an agent that is done: nothing to do is no
		// error, and with --json it is said as a workflow_end, as that
		// resume says it in a run_end.
		if c.Bool(jsonFlag) {
			return writeJSON(c, map[string]any{"type": "workflow_end", "workflow": c.Args().First(), "status": host.StatusDone,
				"reason": fmt.Sprintf("%v; nothing to resume", err)})
		}
		fmt.Fprintf(c.App.Writer, "%v; nothing to resume\n", err)
		return nil
	}
	if err != nil {
		return workflowError(err)
	}
	return workflowStatus(c, res)
}

// checkParallelFlag refuses a --parallel below 1: no step could run.
// Without the flag the workflow file's max_parallel holds.
func checkParallelFlag(c *cli.Context) error {
	if n := c.Int("parallel"); c.IsSet("parallel") && n < 1 {
		return withCode(exitUsage, fmt.Errorf("workflow %s: --parallel %d: give 1 or more steps to run at once, "+
			"or leave the flag out for the workflow file's max_parallel", c.Command.Name, n))
	}
	return nil
}

// workflowError maps an error that kept a workflow from starting to its
// exit code: a step the workflow file gets wrong and an id that is taken
// are usage errors, as a missing file and an agent that exists are to
// `cairn run` and `cairn import`.
func workflowError(err error) error {
	if errors.Is(err, workflow.ErrFlow) || errors.Is(err, checkpoint.ErrExists) || errors.Is(err, workflow.ErrRetry) {
		return withCode(exitUsage, err)
	}
	return runError(err)
}

// workflowOptions prints step events, and with --json every agent's
// events too, each naming its agent; without --json, the warnings of the
// steps' agents go to stderr, each naming its agent. The workflow's own
// warnings (of the workflow id) go to stderr as an agent's do, or, with
// --json, as workflow_warning lines.
func workflowOptions(c *cli.Context, id string) workflow.Options {
	opts := workflow.Options{Parallel: c.Int("parallel"), AutoDeny: c.Bool(autoDenyFlag)}
	if c.Bool(jsonFlag) {
		r := newRenderer(c.App.Writer, c.App.ErrWriter, true)
		opts.OnEvent = r.event
		opts.OnStep = func(ev workflow.StepEvent) { writeJSON(c, stepLine(ev)) }
		opts.OnWarning = func(text string) {
			writeJSON(c, map[string]any{"type": "workflow_warning", "time": time.Now().UTC(), "workflow": id, "text": text})
		}
		return opts
	}
	opts.OnStep = func(ev workflow.StepEvent) { printStep(c.App.Writer, ev) }
	opts.OnEvent = func(e host.Event) {
		if e.Type == host.EventWarning {
			fmt.Fprintf(c.App.ErrWriter, "cairn: warning: %s: %s\n", e.Agent, terminalLine(e.Text))
		}
	}
	opts.OnWarning = func(text string) { fmt.Fprintf(c.App.ErrWriter, "cairn: warning: %s\n", terminalLine(text)) }
	return opts
}

// stepJSON is a step event as --json prints it: type step_start,
// step_skip, step_done, step_paused, step_failed...
type stepJSON struct {
	Type    string    `json:"type"`
	Time    time.Time `json:"time"`
	Step    string    `json:"step"`
	Kind    string    `json:"kind"`
	Agent   string    `json:"agent"`
	Output  string    `json:"output,omitempty"`
	Reason  string    `json:"reason,omitempty"`
	Resumed bool      `json:"resumed,omitempty"`
}

func stepLine(ev workflow.StepEvent) stepJSON {
	return stepJSON{Type: "step_" + ev.Type, Time: time.Now().UTC(), Step: ev.Step, Kind: ev.Kind, Agent: ev.Agent,
		Output: ev.Output, Reason: ev.Reason, Resumed: ev.Resumed}
}

func printStep(w io.Writer, ev workflow.StepEvent) {
	switch ev.Type {
	case "start":
		how := "starts"
		if ev.Resumed {
			how = "resumes from its agent's boundary"
		}
		fmt.Fprintf(w, "step %s (%s, agent %s) %s\n", ev.Step, ev.Kind, ev.Agent, how)
	case "skip":
		fmt.Fprintf(w, "step %s completed before: skipped\n", ev.Step)
	case "done":
		fmt.Fprintf(w, "step %s done: %s\n", ev.Step, firstLine(ev.Output))
	default:
		fmt.Fprintf(w, "step %s %s: %s\n", ev.Step, ev.Type, terminalText(ev.Reason))
	}
}

// firstLine is s's first line, shortened to 100 runes, its tabs made
// spaces (it may be a column of a table) and what else a terminal could
// act on escaped: s is a step's output, which a model or a tool wrote.
func firstLine(s string) string {
	s, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 100 {
		s, more = string(r[:100]), true
	}
	if more {
		s += " …"
	}
	return terminalLine(strings.ReplaceAll(s, "\t", " "))
}

// workflowStatus prints how the workflow ended and maps it to the exit code.
func workflowStatus(c *cli.Context, res *workflow.Result) error {
	if c.Bool(jsonFlag) {
		if err := writeJSON(c, map[string]any{"type": "workflow_end", "workflow": res.ID, "status": res.Status,
			"reason": res.Reason, "ran": res.Ran, "skipped": res.Skipped}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(c.App.Writer, "workflow %s %s: %s ran, %d skipped\n", res.ID, res.Status, plural.Count(len(res.Ran), "step"), len(res.Skipped))
	}
	resume := "`cairn workflow resume " + res.ID + "`"
	stop := res.Stop
	if stop == nil {
		stop = &workflow.Stop{}
	}
	switch {
	case res.Status == checkpoint.StatusDone:
		return nil
	case stop.Held != nil:
		// As `cairn resume` of an agent another process runs.
		return withCode(exitLocked, fmt.Errorf("workflow %s paused: %s (%s)", res.ID, res.Reason, resume))
	case res.Status == checkpoint.StatusPaused && strings.Contains(res.Reason, resume):
		// A sub-agent of a step stopped it: its reason says how to go on.
		return withCode(exitPaused, fmt.Errorf("workflow %s paused: %s", res.ID, res.Reason))
	case res.Status == checkpoint.StatusPaused:
		return withCode(exitPaused, fmt.Errorf("workflow %s paused: %s; continue with %s", res.ID, res.Reason, resume))
	case res.Status == checkpoint.StatusApproval && len(stop.Calls) > 0:
		return withCode(exitApproval, fmt.Errorf("workflow %s waits: %s; decide with %s, then %s", res.ID, res.Reason, decisions(res, stop), resume))
	case res.Status == checkpoint.StatusApproval:
		// A call of a sub-agent waits: the reason says where to decide,
		// and then to resume the workflow.
		if !strings.Contains(res.Reason, resume) {
			return withCode(exitApproval, fmt.Errorf("workflow %s waits: %s; then %s", res.ID, res.Reason, resume))
		}
		return withCode(exitApproval, fmt.Errorf("workflow %s waits: %s", res.ID, res.Reason))
	case stop.Retry:
		// What the step did is unknown: the reason says what to check,
		// and how to make it again.
		return withCode(exitFailed, fmt.Errorf("workflow %s failed: %s", res.ID, res.Reason))
	case stop.InFlow:
		return withCode(exitFailed, fmt.Errorf("workflow %s failed: %s; the workflow keeps the workflow file it started with, so a resume fails the same way: "+
			"fix the file and run it anew (`cairn workflow run`)", res.ID, res.Reason))
	}
	return withCode(exitFailed, fmt.Errorf("workflow %s failed: %s; fix it and %s", res.ID, res.Reason, resume))
}

// decisions are the approve and deny that decide the calls of each step
// that waits for them, stop's first: steps that ran side by side may each
// wait.
func decisions(res *workflow.Result, stop *workflow.Stop) string {
	stops := res.Stopped
	if len(stops) == 0 {
		stops = []workflow.Stop{*stop}
	}
	var each []string
	for _, s := range stops {
		if s.Status != checkpoint.StatusApproval || len(s.Calls) == 0 {
			continue
		}
		call := "CALL"
		if len(s.Calls) == 1 {
			call = s.Calls[0]
		}
		each = append(each, fmt.Sprintf("`cairn approve %s %s` or `cairn deny %s %s --reason TEXT`", s.Agent, call, s.Agent, call))
	}
	return strings.Join(each, ", and ")
}

func workflowLsAction(c *cli.Context) error {
	store, err := openStore(c)
	if err != nil {
		return err
	}
	recs, errs, err := workflow.List(store)
	if err != nil {
		return err
	}
	if c.Bool(jsonFlag) {
		for _, r := range recs {
			if err := writeJSON(c, workflowLine(r)); err != nil {
				return err
			}
		}
		for _, id := range slices.Sorted(maps.Keys(errs)) {
			if err := writeJSON(c, map[string]string{"workflow": id, "status": statusUnreadable, "error": errs[id].Error()}); err != nil {
				return err
			}
		}
		return nil
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WORKFLOW\tNAME\tSTATUS\tSTEPS\tUPDATED")
	for _, r := range recs {
		l := workflowLine(r)
		fmt.Fprintf(w, "%s\t%s\t%s\t%d/%d\t%s\n", l.ID, l.Name, l.Status, len(r.Steps), l.Total, r.Updated.Local().Format(time.DateTime))
	}
	unreadable := slices.Sorted(maps.Keys(errs))
	for _, id := range unreadable {
		fmt.Fprintf(w, "%s\t-\t%s\t-\t-\n", id, statusUnreadable)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// The table keeps its columns; why each one is unreadable is below it.
	for _, id := range unreadable {
		fmt.Fprintf(c.App.ErrWriter, "cairn: workflow %s is %s: %s\n", id, statusUnreadable, terminalLine(errs[id].Error()))
	}
	return nil
}

// statusUnreadable is the status ls gives a workflow whose record cannot
// be read; the error follows the table, and `cairn workflow show ID` says
// it too.
const statusUnreadable = "unreadable"

// workflowJSON is a workflow as ls --json and show --json print it.
type workflowJSON struct {
	ID        string            `json:"workflow"`
	Name      string            `json:"name"`
	Status    checkpoint.Status `json:"status"`
	Reason    string            `json:"reason,omitempty"`
	Workspace string            `json:"workspace,omitempty"`
	Total     int               `json:"steps_total"`
	Started   time.Time         `json:"started"`
	Updated   time.Time         `json:"updated"`
	Steps     []doneStepJSON    `json:"steps"`
}

// doneStepJSON is a completed step as ls --json and show --json print it.
type doneStepJSON struct {
	Name     string    `json:"name"`
	Agent    string    `json:"agent,omitempty"`
	Output   string    `json:"output"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}

func workflowLine(r *checkpoint.Workflow) workflowJSON {
	total := 0
	if f, err := workflow.Parse(r.Flow, r.Dir); err == nil {
		total = len(f.Steps)
	}
	steps := make([]doneStepJSON, len(r.Steps))
	for i, s := range r.Steps {
		steps[i] = doneStepJSON{Name: s.Name, Agent: s.Agent, Output: s.Output, Started: s.Started, Finished: s.Finished}
	}
	return workflowJSON{ID: r.ID, Name: r.Name, Status: r.Status, Reason: r.Reason, Workspace: r.Workspace,
		Total: total, Started: r.Started, Updated: r.Updated, Steps: steps}
}

func workflowShowAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitUsage, errors.New("usage: cairn workflow show ID"))
	}
	store, err := openStore(c)
	if err != nil {
		return err
	}
	r, err := workflow.Show(store, c.Args().First())
	if err != nil {
		return runError(err)
	}
	if c.Bool(jsonFlag) {
		return writeJSON(c, workflowLine(r))
	}
	l := workflowLine(r)
	fmt.Fprintf(c.App.Writer, "workflow %s (%s): %s, %d of %s completed\n", r.ID, r.Name, r.Status, len(r.Steps), plural.Count(l.Total, "step"))
	if r.Reason != "" {
		fmt.Fprintf(c.App.Writer, "  %s\n", terminalText(r.Reason))
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  STEP\tAGENT\tTOOK\tOUTPUT")
	for _, s := range r.Steps {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", s.Name, s.Agent, s.Finished.Sub(s.Started).Round(time.Millisecond), firstLine(s.Output))
	}
	return w.Flush()
}
