package workflow_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/pgtest"
)

const exampleFlow = "../../examples/workflow/flow.yaml"

// cache is one compile cache for the package's tests.
var cache = filepath.Join(os.TempDir(), "cairn-workflow-test-cache")

func engine(t *testing.T, store checkpoint.Store) *host.Engine {
	t.Helper()
	eng, err := host.NewEngine(context.Background(), host.Config{Store: store, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	return eng
}

// workspace is a copy of the example's workspace.
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	data, err := os.ReadFile("../../examples/workflow/workspace/notes.md")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(ws, "notes.md"), data, 0o644))
	return ws
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// steps records step events in order, safe for the runner's goroutines.
type steps struct {
	mu  sync.Mutex
	evs []workflow.StepEvent
}

func (s *steps) on(ev workflow.StepEvent) { s.mu.Lock(); s.evs = append(s.evs, ev); s.mu.Unlock() }

func (s *steps) names(typ string) []string {
	var out []string
	for _, ev := range s.evs {
		if ev.Type == typ {
			out = append(out, ev.Step)
		}
	}
	return out
}

func outputs(rec *checkpoint.Workflow) map[string]string {
	out := map[string]string{}
	for _, s := range rec.Steps {
		out[s.Name] = s.Output
	}
	return out
}

// The example flow runs its five steps with every need met before a step
// starts, later prompts get earlier outputs, and the report is written.
func TestExampleFlowRuns(t *testing.T) {
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	eng := engine(t, checkpoint.NewMemStore())
	ws := workspace(t)
	var st steps
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf-1", Workspace: ws, OnStep: st.on})
	must(t, err)
	if res.Status != checkpoint.StatusDone || len(res.Ran) != 5 {
		t.Fatalf("status %s (%s), ran %v", res.Status, res.Reason, res.Ran)
	}
	out := outputs(res.Record)
	if !strings.Contains(out["notes"], "ridge cairn") || !strings.Contains(out["stats"], "words") ||
		out["summary"] != "The ridge cairn survived the storm and needs a spring check." ||
		out["review"] != "The report is ready." {
		t.Fatalf("outputs %q", out)
	}
	done := st.names("done")
	for _, s := range f.Steps {
		for _, n := range s.Needs {
			if slices.Index(done, n) > slices.Index(done, s.Name) {
				t.Fatalf("%s completed after %s, which needs it: %v", n, s.Name, done)
			}
		}
	}
	rec, err := eng.Store().Read(workflow.StepAgent("wf-1", "report"))
	must(t, err)
	if got := rec.State.Messages[0].Text; !strings.Contains(got, out["summary"]) || !strings.Contains(got, out["stats"]) {
		t.Fatalf("the report's prompt lacks the earlier outputs: %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "REPORT.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := workflow.Resume(context.Background(), eng, "wf-1", workflow.Options{}); !errors.Is(err, workflow.ErrFinished) {
		t.Fatalf("resume of a finished workflow: %v", err)
	}
}

// A workflow stopped once its first step has completed resumes with that
// step skipped, runs the others once each, and ends with the outputs of a
// run that was never stopped.
func TestResumeRunsOnlyUnfinishedSteps(t *testing.T) {
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	eng := engine(t, checkpoint.NewMemStore())
	whole, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf-whole", Workspace: workspace(t)})
	must(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopAfter := func(ev workflow.StepEvent) {
		if ev.Type == "done" && ev.Step == "notes" {
			cancel()
		}
	}
	ws := workspace(t)
	first, err := workflow.Run(ctx, eng, f, workflow.Options{ID: "wf-2", Workspace: ws, OnStep: stopAfter})
	must(t, err)
	if first.Status != checkpoint.StatusPaused || !reflect.DeepEqual(first.Ran, []string{"notes"}) {
		t.Fatalf("stopped run: status %s, ran %v", first.Status, first.Ran)
	}
	var st steps
	res, err := workflow.Resume(context.Background(), eng, "wf-2", workflow.Options{OnStep: st.on})
	must(t, err)
	if res.Status != checkpoint.StatusDone || !reflect.DeepEqual(res.Skipped, []string{"notes"}) || len(res.Ran) != 4 {
		t.Fatalf("resume: status %s (%s), skipped %v, ran %v", res.Status, res.Reason, res.Skipped, res.Ran)
	}
	if !reflect.DeepEqual(outputs(res.Record), outputs(whole.Record)) {
		t.Fatalf("outputs after resume\n%q\nwithout a stop\n%q", outputs(res.Record), outputs(whole.Record))
	}
}

// A workflow record of a newer schema is refused by resume, and the
// store's files are left byte for byte as they were.
func TestFutureSchemaRefusedFilesUnchanged(t *testing.T) {
	dir := t.TempDir()
	store, err := checkpoint.OpenFileStore(dir)
	must(t, err)
	data, err := cbor.Marshal(&checkpoint.Workflow{Schema: checkpoint.WorkflowSchemaVersion + 1, ID: "wf-new",
		Flow: []byte("name: x\n"), Status: checkpoint.StatusPaused})
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(dir, "workflows"), 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "workflows", "wf-new.cbor"), data, 0o600))
	before := tree(t, dir)
	_, err = workflow.Resume(context.Background(), engine(t, store), "wf-new", workflow.Options{})
	if !errors.Is(err, checkpoint.ErrFutureSchema) {
		t.Fatalf("got %v, want ErrFutureSchema", err)
	}
	if after := tree(t, dir); !reflect.DeepEqual(after, before) {
		t.Fatalf("the store changed:\nbefore %v\nafter  %v", before, after)
	}
}

// tree hashes every file under dir by its path.
func tree(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = sha256.Sum256(b)
		return err
	}))
	return out
}

func TestParseRefusesBadFlows(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"no steps", "name: f\n", "steps is empty"},
		{"two kinds", "name: f\nsteps: [{name: a, agent: x.yaml, prompt: p, tool: t, module: builtin}]\n", "exactly one of"},
		{"unknown need", "name: f\nsteps: [{name: a, agent: x.yaml, prompt: p, needs: [b]}]\n", `needs "b"`},
		{"cycle", "name: f\nsteps: [{name: a, agent: x.yaml, prompt: p, needs: [b]}, {name: b, agent: x.yaml, prompt: p, needs: [a]}]\n", "need each other"},
		{"template not needed", "name: f\nsteps: [{name: a, agent: x.yaml, prompt: p}, {name: b, agent: x.yaml, prompt: '{{steps.a.output}}'}]\n", "add a to its needs"},
		{"same name", "name: f\nsteps: [{name: a, agent: x.yaml, prompt: p}, {name: a, agent: x.yaml, prompt: p}]\n", "a second step"},
		{"agent without prompt", "name: f\nsteps: [{name: a, agent: x.yaml}]\n", "needs a prompt"},
		{"unknown key", "name: f\nstep: []\n", `unknown key "step" (did you mean "steps"?)`},
	} {
		_, err := workflow.Parse([]byte(tc.yaml), "/flows")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// A delegation step to a sub-agent that asks for more than the agent file
// declaring it is refused with the line to change, before anything is
// stored; one to a name it does not declare lists those it does.
func TestDelegationStepIsNarrowed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) { must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)) }
	write("team.yaml", "name: team\nmodel: {provider: script}\ntools: [{module: builtin, only: [read_file]}]\n"+
		"agents:\n  - name: writer\n    description: writes\n    model: {provider: script}\n    tools: [{module: builtin, only: [write_file]}]\n")
	for _, tc := range []struct{ to, want string }{{"writer", "team.yaml line 8"}, {"nobody", "declares: writer"}} {
		write("flow.yaml", "name: f\nworkspace: .\nsteps:\n  - {name: d, delegate: "+tc.to+", parent: team.yaml, task: go}\n")
		f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
		must(t, err)
		store := checkpoint.NewMemStore()
		_, err = workflow.Run(context.Background(), engine(t, store), f, workflow.Options{})
		if !errors.Is(err, host.ErrSubAgent) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("delegate to %s: %v, want the sub-agent refused naming %q", tc.to, err, tc.want)
		}
		if ids, _ := store.WorkflowIDs(); len(ids) != 0 {
			t.Errorf("delegate to %s: stored %v", tc.to, ids)
		}
	}
}

// On PostgreSQL a workflow stopped after its first step resumes with that
// step skipped, as on a directory: the record, the lock of its id and the
// steps' agents all live in the database.
func TestWorkflowOnPostgres(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	store, err := pgstore.Open(context.Background(), url)
	must(t, err)
	defer store.Close()
	eng := engine(t, store)
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := workflow.Run(ctx, eng, f, workflow.Options{ID: "wf-pg", Workspace: workspace(t), OnStep: func(ev workflow.StepEvent) {
		if ev.Type == "done" {
			cancel()
		}
	}})
	must(t, err)
	if first.Status != checkpoint.StatusPaused {
		t.Fatalf("stopped run: %s (%s)", first.Status, first.Reason)
	}
	res, err := workflow.Resume(context.Background(), eng, "wf-pg", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusDone || len(res.Skipped) != 1 || len(res.Ran) != 4 {
		t.Fatalf("resume: %s (%s), skipped %v, ran %v", res.Status, res.Reason, res.Skipped, res.Ran)
	}
	recs, errs, err := workflow.List(store)
	must(t, err)
	if len(recs) != 1 || len(errs) != 0 || len(recs[0].Steps) != 5 {
		t.Fatalf("List: %+v, %v", recs, errs)
	}
}

// A step whose call awaits approval stops the workflow awaiting approval;
// once the call is decided, resume continues that step's agent and
// finishes the steps that need it.
func TestApprovalPausesTheWorkflow(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) { must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)) }
	write("script.yaml", "turns:\n  - tool_calls: [{name: write_file, input: {path: out.txt, content: hi}}]\n  - text: wrote it\n")
	write("asker.yaml", "name: asker\nmodel: {provider: script, script: script.yaml}\n"+
		"tools: [{module: builtin, only: [write_file]}]\napprovals: [{tool: write_file, action: ask}]\n")
	write("flow.yaml", "name: f\nworkspace: .\nsteps:\n  - {name: a, agent: asker.yaml, prompt: go}\n"+
		"  - {name: b, needs: [a], tool: read_file, module: builtin, input: {path: out.txt}}\n")
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	eng := engine(t, checkpoint.NewMemStore())
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf-ask"})
	must(t, err)
	if res.Status != checkpoint.StatusApproval || len(res.Ran) != 0 {
		t.Fatalf("run: %s (%s), ran %v", res.Status, res.Reason, res.Ran)
	}
	must(t, eng.Decide(t.Context(), workflow.StepAgent("wf-ask", "a"), "call_1_0", host.Decision{Approved: true}))
	res, err = workflow.Resume(context.Background(), eng, "wf-ask", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusDone || !reflect.DeepEqual(res.Ran, []string{"a", "b"}) {
		t.Fatalf("resume: %s (%s), ran %v", res.Status, res.Reason, res.Ran)
	}
	if out := outputs(res.Record); out["a"] != "wrote it" || !strings.Contains(out["b"], "hi") {
		t.Fatalf("outputs %q", out)
	}
}

// An id too long to name a step's agent is refused before anything is
// stored.
func TestLongIDRefused(t *testing.T) {
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	store := checkpoint.NewMemStore()
	_, err = workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: strings.Repeat("w", 125)})
	if err == nil || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("got %v, want the id refused", err)
	}
	if ids, _ := store.WorkflowIDs(); len(ids) != 0 {
		t.Fatalf("stored %v", ids)
	}
}

// Regression: a workflow took over an unrelated agent that had its step's
// id, reading that agent's answer as the step's output. A new run whose
// step's agent is there already is refused before anything is stored,
// naming the agent, and the agent is left as it was.
func TestStepRefusesAnotherAgentOfItsID(t *testing.T) {
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	eng := engine(t, checkpoint.NewMemStore())
	ws := workspace(t)
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf-a", Workspace: ws})
	must(t, err)
	if res.Status != checkpoint.StatusDone {
		t.Fatalf("the first workflow: %s (%s)", res.Status, res.Reason)
	}
	// Another agent made under the id wf-b's summary step will have.
	src, err := eng.Store().Read(workflow.StepAgent("wf-a", "summary"))
	must(t, err)
	_, err = eng.Fork(context.Background(), host.ForkOptions{ID: workflow.StepAgent("wf-a", "summary"), Past: true,
		AtRound: src.State.Round, As: workflow.StepAgent("wf-b", "summary"), Workspace: t.TempDir()})
	must(t, err)
	before, err := eng.Store().Read(workflow.StepAgent("wf-b", "summary"))
	must(t, err)
	_, err = workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf-b", Workspace: workspace(t)})
	if !errors.Is(err, checkpoint.ErrExists) || !strings.Contains(err.Error(), "agent wf-b.summary") {
		t.Fatalf("the second workflow: %v; want it refused naming agent wf-b.summary", err)
	}
	if _, err := eng.Store().(checkpoint.Workflows).Workflow("wf-b"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("the refused workflow was stored: %v", err)
	}
	after, err := eng.Store().Read(workflow.StepAgent("wf-b", "summary"))
	must(t, err)
	if after.State.Round != before.State.Round || len(after.State.Messages) != len(before.State.Messages) {
		t.Fatal("the other agent was run")
	}
}

// Regression: a tool step that failed ("fix it and `cairn workflow
// resume`") failed again on resume with its stored error, though its cause
// was fixed. Its call is made again.
func TestFailedToolStepRunsAgainOnResume(t *testing.T) {
	dir := t.TempDir()
	flow := filepath.Join(dir, "flow.yaml")
	must(t, os.WriteFile(flow, []byte("name: retry\nworkspace: ws\nsteps:\n  - name: read\n    tool: read_file\n    module: builtin\n    input: {path: missing.md}\n"), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	f, err := workflow.Load(flow)
	must(t, err)
	eng := engine(t, checkpoint.NewMemStore())
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf-r"})
	must(t, err)
	if res.Status != checkpoint.StatusFailed || !strings.Contains(res.Reason, "missing.md") {
		t.Fatalf("run: %s (%s); want the step to fail on the missing file", res.Status, res.Reason)
	}
	must(t, os.WriteFile(filepath.Join(dir, "ws", "missing.md"), []byte("found now\n"), 0o644))
	res, err = workflow.Resume(context.Background(), eng, "wf-r", workflow.Options{})
	must(t, err)
	if res.Status != checkpoint.StatusDone || !strings.Contains(outputs(res.Record)["read"], "found now") {
		t.Fatalf("resume: %s (%s), outputs %q", res.Status, res.Reason, outputs(res.Record))
	}
}

// A workflow whose record says running is listed and shown interrupted
// when no process holds its lock (its process was killed), and running
// while one does.
func TestKilledWorkflowListedInterrupted(t *testing.T) {
	store, err := checkpoint.OpenFileStore(t.TempDir())
	must(t, err)
	f, err := workflow.Load(exampleFlow)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = workflow.Run(ctx, engine(t, store), f, workflow.Options{ID: "wk", Workspace: workspace(t),
		OnStep: func(ev workflow.StepEvent) {
			if ev.Type == "done" {
				cancel()
			}
		}})
	must(t, err)
	// What a kill leaves: the record says running.
	rec, err := store.Workflow("wk")
	must(t, err)
	rec.Status = checkpoint.StatusRunning
	must(t, store.PutWorkflow(rec))
	status := func() (checkpoint.Status, checkpoint.Status) {
		shown, err := workflow.Show(store, "wk")
		must(t, err)
		recs, _, err := workflow.List(store)
		must(t, err)
		if len(recs) != 1 {
			t.Fatalf("listed %d workflows", len(recs))
		}
		return shown.Status, recs[0].Status
	}
	if shown, listed := status(); shown != workflow.StatusInterrupted || listed != workflow.StatusInterrupted {
		t.Fatalf("no process holds it: shown %s, listed %s; want %s", shown, listed, workflow.StatusInterrupted)
	}
	other, err := checkpoint.OpenFileStore(store.Dir())
	must(t, err)
	lock, err := other.Lock("wk", checkpoint.ThisProcess("test"))
	must(t, err)
	defer lock.Unlock()
	if shown, listed := status(); shown != checkpoint.StatusRunning || listed != checkpoint.StatusRunning {
		t.Fatalf("a process holds it: shown %s, listed %s; want running", shown, listed)
	}
}

// A mistyped key in a workflow file is named as a key, with the one meant.
func TestFlowUnknownKeyNamed(t *testing.T) {
	_, err := workflow.Parse([]byte("name: w\nsteps:\n  - name: a\n    agnt: x.yaml\n"), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `line 4: unknown key "agnt" (did you mean "agent"?)`) {
		t.Fatalf("got %v", err)
	}
}
