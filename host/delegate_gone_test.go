package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// editAgent delegates once to kid, which appends a line to log.txt with
// an edit (made twice, the line is there twice), reads it back and
// answers.
const editAgent = `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
agents:
  - name: kid
    description: appends to log.txt
    model: {provider: script, script: kid.yaml}
    tools: [{module: builtin, only: [read_file, edit_file]}]
`

const editScript = `
turns:
  - tool_calls:
      - name: delegate
        input: {agent: kid, task: append to log.txt}
  - text: parent done
`

const kidScript = `
turns:
  - tool_calls: [{name: read_file, input: {path: log.txt}}]
  - tool_calls: [{name: edit_file, input: {path: log.txt, old_text: START, new_text: "START\nkid-edit"}}]
  - tool_calls: [{name: read_file, input: {path: log.txt}}]
  - text: kid done
`

// editTeam writes the agent, the kid's script and log.txt.
func editTeam(t *testing.T) *AgentFile {
	t.Helper()
	af := teamIn(t, editAgent, editScript, map[string]string{"kid.yaml": kidScript})
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "log.txt"), []byte("START\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return af
}

// kidDir is the directory of lead's one child in the file store.
func kidDir(store checkpoint.Store) (id, dir string) {
	id = childID("lead", "kid", "call_1_0")
	return id, filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", id)
}

// edits counts the kid's edit in log.txt.
func edits(t *testing.T, af *AgentFile) int {
	t.Helper()
	return strings.Count(readFile(t, af.WorkspaceDir(), "log.txt"), "kid-edit")
}

// Regression: a child's directory removed while its delegation ran made
// the parent's run end saying another process ran the child, and the
// resume then started the child over from its task: its edit reached
// log.txt twice. The run says the child's store vanished, and the resume
// gives the delegation a result saying the child is gone, without
// running it again.
func TestDelegateChildRemovedWhileRunningIsNotRunAgain(t *testing.T) {
	eng, store := fileEngine(t)
	af := editTeam(t)
	id, dir := kidDir(store)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventRoundEnd && e.Agent == id && e.Round == 2 {
			if err := os.RemoveAll(dir); err != nil {
				t.Error(err)
			}
		}
	}})
	if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "stored state vanished") ||
		strings.Contains(res.Reason, "another process") {
		t.Fatalf("run: %+v, %v; want it paused saying the child's store vanished", res, err)
	}
	if n := edits(t, af); n != 1 {
		t.Fatalf("log.txt has the edit %d times before the resume", n)
	}
	assertGone(t, eng, store, af)
}

// Regression: a parent stopped while its child ran, and the child's
// directory then moved aside (as the store's corruption error advises),
// was resumed by starting the child over: its edit reached log.txt twice.
func TestDelegateChildMovedAsideIsNotRunAgain(t *testing.T) {
	eng, store := fileEngine(t)
	af := editTeam(t)
	id, dir := kidDir(store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "lead", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventRoundEnd && e.Agent == id && e.Round == 2 {
			cancel()
		}
	}})
	if err != nil || res.Status != StatusPaused {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if err := os.Rename(dir, filepath.Join(t.TempDir(), "moved-aside")); err != nil {
		t.Fatal(err)
	}
	assertGone(t, eng, store, af)
}

// assertGone resumes lead, whose child is gone, and checks that the child
// did not run again and that the delegation's result says it is gone.
func assertGone(t *testing.T, eng *Engine, store checkpoint.Store, af *AgentFile) {
	t.Helper()
	id, _ := kidDir(store)
	res, events := resume(t, eng, "lead", StrategySeal)
	if res.Status != StatusDone {
		t.Fatalf("resume: %+v", res)
	}
	if n := edits(t, af); n != 1 {
		t.Fatalf("log.txt has the edit %d times: the child ran again", n)
	}
	if store.Exists(id) {
		t.Fatalf("the child %s was made again", id)
	}
	rec, _ := store.Read("lead")
	if got := toolTexts(rec.State); len(got) != 1 || !strings.Contains(got[0], "its stored state is gone") ||
		!strings.Contains(got[0], "unknown") {
		t.Fatalf("the delegation's result: %q", got)
	}
	var warned bool
	for _, e := range events {
		warned = warned || e.Type == EventWarning && strings.Contains(e.Text, "no longer in the store")
	}
	if !warned {
		t.Fatal("the resume did not say the child is gone")
	}
}

// Regression: the parent took whatever agent sat at its child's id for
// its child: one run there with `cairn run --id CHILD --fresh` gave its
// answer as the delegation's result. The parent refuses it, leaves it as
// it is, and once it is taken out, says the child is gone.
func TestDelegateRefusesAChildItDidNotMake(t *testing.T) {
	eng, store := fileEngine(t)
	af := editTeam(t)
	id, dir := kidDir(store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "lead", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventRoundEnd && e.Agent == id && e.Round == 1 {
			cancel()
		}
	}})
	if err != nil || res.Status != StatusPaused {
		t.Fatalf("run: %+v, %v", res, err)
	}
	evil := agentIn(t, "name: evil\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns:\n  - text: evil answer\n")
	if res, err := eng.Run(context.Background(), RunOptions{Agent: evil, ID: id, Fresh: true, Prompt: "do evil"}); err != nil || res.Status != StatusDone {
		t.Fatalf("evil run: %+v, %v", res, err)
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead"})
	if err != nil || res.Status != StatusFailed || !strings.Contains(res.Reason, "is not the sub-agent this delegation made") {
		t.Fatalf("resume with a foreign child: %+v, %v; want it refused", res, err)
	}
	rec, _ := store.Read("lead")
	for _, got := range toolTexts(rec.State) {
		if strings.Contains(got, "evil answer") {
			t.Fatalf("the foreign agent's answer reached the parent: %q", got)
		}
	}
	if in, err := store.Read(id); err != nil || in.State.Parent != nil {
		t.Fatalf("the foreign agent was not left as it was: %v", err)
	}
	if err := os.Rename(dir, filepath.Join(t.TempDir(), "evil")); err != nil {
		t.Fatal(err)
	}
	res, _ = resume(t, eng, "lead", StrategySeal)
	rec, _ = store.Read("lead")
	if got := toolTexts(rec.State); res.Status != StatusDone || len(got) != 1 || !strings.Contains(got[0], "its stored state is gone") {
		t.Fatalf("resume once it is out: %+v; results %q", res, got)
	}
}

// Regression: a stop after a delegation's mark was made and before its
// child was made left a mark whose child was not in the store, and the
// resume took the child for gone: the delegation's result said what it
// changed was unknown, though it had never started. A mark counts once it
// says its child was made; without that, the child is made now, once.
func TestDelegationMarkedBeforeItsChildWasMadeRunsIt(t *testing.T) {
	eng, store := fileEngine(t)
	af := teamIn(t, editAgent+"approvals: [{tool: delegate, action: ask}]\n", editScript, map[string]string{"kid.yaml": kidScript})
	must(t, os.WriteFile(filepath.Join(af.WorkspaceDir(), "log.txt"), []byte("START\n"), 0o644))
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
	// What a stop between the mark and the child's making leaves.
	id, _ := kidDir(store)
	mark := filepath.Join(filepath.Dir(eng.stagingRoot("lead")), "delegations", "round-1", "call_1_0")
	must(t, os.MkdirAll(filepath.Dir(mark), 0o700))
	must(t, os.WriteFile(mark, []byte(id+"\n"), 0o600))
	must(t, eng.Decide(context.Background(), "lead", "call_1_0", Decision{Approved: true}))
	res, _ = resume(t, eng, "lead", StrategySeal)
	if res.Status != StatusDone || edits(t, af) != 1 {
		t.Fatalf("resume: %+v, %d edits; want done, the child run once", res, edits(t, af))
	}
	rec, err := store.Read("lead")
	must(t, err)
	for _, m := range rec.State.Messages {
		if m.CallID == "call_1_0" && (m.IsError || strings.Contains(m.Text, "gone")) {
			t.Errorf("the delegation's result: %q; want the child's answer", m.Text)
		}
	}
}
