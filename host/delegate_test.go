package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

const teamAgent = `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
max_parallel: 2
agents:
  - name: alpha
    description: writes alpha.txt
    model: {provider: script, script: alpha.yaml}
    tools: [{module: builtin, only: [write_file, read_file]}]
  - name: beta
    description: writes beta.txt
    model: {provider: script, script: beta.yaml}
    tools: [{module: builtin, only: [write_file]}]
`

const teamScript = `
turns:
  - tool_calls:
      - name: delegate
        input: {agent: alpha, task: write alpha.txt}
      - name: delegate
        input: {agent: beta, task: write beta.txt}
  - text: both done
`

// childScript writes name.txt and says so. A write that resume sealed
// (an error result) is made again, as a model told the call did not
// finish would: the script does not take a sealed call for done.
func childScript(name string) string {
	write := "[{name: write_file, input: {path: " + name + ".txt, content: " + name + "}}]"
	return `
turns:
  - tool_calls: ` + write + `
  - alternatives:
      - when: {tool: write_file, error: true}
        tool_calls: ` + write + `
      - text: wrote ` + name + `.txt
  - text: wrote ` + name + `.txt
`
}

// teamIn writes the team agent, its scripts and any more files.
func teamIn(t *testing.T, agent, script string, more map[string]string) *AgentFile {
	t.Helper()
	af := agentIn(t, agent, script)
	files := map[string]string{"alpha.yaml": childScript("alpha"), "beta.yaml": childScript("beta")}
	for k, v := range more {
		files[k] = v
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(af.Dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return af
}

// The parent's delegations make two durable sub-agents with their
// lineage; their answers are the calls' results, their changes reach the
// workspace, their tokens count with the parent's, and their events reach
// the parent's caller with their place in the tree.
func TestDelegateToTwoSubAgents(t *testing.T) {
	eng, store := fileEngine(t)
	af := teamIn(t, teamAgent, teamScript, nil)
	res, events := collectOn(t, eng, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("run: %+v", res)
	}
	kids, err := Children(t.Context(), store, "lead")
	if err != nil || len(kids) != 2 {
		t.Fatalf("children: %+v, %v", kids, err)
	}
	var childUsage conversation.Usage
	for i, name := range []string{"alpha", "beta"} {
		want := childID("lead", name, "call_1_"+string(rune('0'+i)))
		rec, err := store.Read(want)
		if err != nil {
			t.Fatalf("child %s: %v", want, err)
		}
		p := rec.State.Parent
		if p == nil || p.Agent != "lead" || p.Depth != 1 || p.Name != name || rec.State.Status != checkpoint.StatusDone {
			t.Fatalf("child %s: parent %+v, status %s", want, p, rec.State.Status)
		}
		if got := readFile(t, af.WorkspaceDir(), name+".txt"); got != name {
			t.Fatalf("%s.txt = %q", name, got)
		}
		childUsage = childUsage.Add(rec.State.Usage)
	}
	rec, _ := store.Read("lead")
	var own conversation.Usage
	for _, e := range events {
		if e.Type == EventModelTurn && e.Agent == "lead" {
			own = own.Add(*e.Usage)
		}
	}
	if rec.State.Usage != own.Add(childUsage) {
		t.Fatalf("parent usage %+v, want its own %+v and its children's %+v", rec.State.Usage, own, childUsage)
	}
	results := toolTexts(rec.State)
	if len(results) != 2 || results[0] != "wrote alpha.txt" || results[1] != "wrote beta.txt" {
		t.Fatalf("delegations' results: %q", results)
	}
	var fromChild bool
	for _, e := range events {
		if e.Agent != "lead" && e.Parent == "lead" && e.Depth == 1 {
			fromChild = true
		}
	}
	if !fromChild {
		t.Fatal("no event of a child reached the parent's caller with its parent and depth")
	}
}

func collectOn(t *testing.T, eng *Engine, opts RunOptions) (*Result, []Event) {
	t.Helper()
	var events []Event
	opts.OnEvent = func(e Event) { events = append(events, e) }
	res, err := eng.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

func toolTexts(st *checkpoint.State) []string {
	var out []string
	for _, m := range st.Messages {
		if m.Role == conversation.RoleTool {
			out = append(out, m.Text)
		}
	}
	return out
}

// A sub-agent that asks for a grant its parent lacks is refused when the
// parent starts, naming the line to change; nothing is made.
func TestSubAgentCannotWidenItsParent(t *testing.T) {
	cases := []struct{ name, agent, want string }{
		{"grant", `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file], grant: {workspace: ro}}]
agents:
  - name: alpha
    description: writes
    model: {provider: script, script: alpha.yaml}
    tools:
      - {module: builtin, only: [read_file], grant: {workspace: rw}}
`, "line 11: sub-agent alpha: tool module builtin asks for workspace: rw"},
		{"only", `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
agents:
  - name: alpha
    description: writes
    model: {provider: script, script: alpha.yaml}
    tools: [{module: builtin, only: [read_file, write_file]}]
`, "line 10: sub-agent alpha: tool module builtin asks for the tool write_file"},
		{"module", `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
agents:
  - name: alpha
    description: counts
    model: {provider: script, script: alpha.yaml}
    tools: [{module: builtin}, {module: other.wasm}]
`, "line 10: sub-agent alpha: tool module other.wasm is not one of its parent's tools"},
		// Regression: a sub-agent got the memory tools of a namespace its
		// parent did not name.
		{"memory", `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
agents:
  - name: alpha
    description: remembers
    memory: shared
    model: {provider: script, script: alpha.yaml}
    tools: [{module: builtin}]
`, `sub-agent alpha: memory "shared" is not its parent's memory namespace`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, store := fileEngine(t)
			af := teamIn(t, tc.agent, teamScript, nil)
			_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
			if !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrSubAgent saying %q", err, tc.want)
			}
			if store.Exists("lead") {
				t.Fatal("a refused agent was kept")
			}
		})
	}
}

// A parent started over forgets its children: its new delegations run
// new ones rather than read the old ones' answers.
func TestFreshRunForgetsChildren(t *testing.T) {
	eng, store := fileEngine(t)
	af := teamIn(t, teamAgent, teamScript, nil)
	collectOn(t, eng, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	alpha := childID("lead", "alpha", "call_1_0")
	first, _ := store.Read(alpha)
	res, _ := collectOn(t, eng, RunOptions{Agent: af, ID: "lead", Prompt: "go", Fresh: true})
	again, err := store.Read(alpha)
	if res.Status != StatusDone || err != nil || len(again.State.Runs) != 1 || again.State.Runs[0].ID == first.State.Runs[0].ID {
		t.Fatalf("fresh run: %+v; child %v, its runs %+v", res, err, again.State.Runs)
	}
}

// max_parallel bounds the children that run at once: with 1, one child's
// run ends before the other's starts.
func TestMaxParallelBoundsTheChildren(t *testing.T) {
	eng, _ := fileEngine(t)
	af := teamIn(t, strings.Replace(teamAgent, "max_parallel: 2", "max_parallel: 1", 1), teamScript, nil)
	_, events := collectOn(t, eng, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	running, most := 0, 0
	for _, e := range events {
		switch {
		case e.Parent != "lead":
		case e.Type == EventRunStart:
			running++
			most = max(most, running)
		case e.Type == EventRunEnd:
			running--
		}
	}
	if most != 1 || running != 0 {
		t.Fatalf("at most %d children ran at once (%d left running); want 1", most, running)
	}
}
