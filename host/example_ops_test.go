package host_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/model"
)

// example is what the examples of single operations start from: a store
// in a temporary directory, an engine on it, and the example agent that
// has run once as "hello-1" on a copy of its workspace.
type example struct {
	ctx   context.Context
	dir   string
	store *checkpoint.FileStore
	eng   *host.Engine
}

func newExample(opts ...checkpoint.FileStoreOption) *example {
	dir, err := os.MkdirTemp("", "cairn-example-")
	if err != nil {
		log.Fatal(err)
	}
	store, err := host.OpenStore(filepath.Join(dir, "store"), opts...)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	cache := filepath.Join(os.TempDir(), "cairn-host-example-cache")
	eng, err := host.NewEngine(ctx, host.Config{Store: store, CacheDir: cache})
	if err != nil {
		log.Fatal(err)
	}
	return &example{ctx: ctx, dir: dir, store: store, eng: eng}
}

func (x *example) close() {
	x.eng.Close(x.ctx)
	x.store.Close()
	os.RemoveAll(x.dir)
}

// runHello runs the example agent to its end as id.
func (x *example) runHello(id string) {
	agent, err := host.LoadAgentFile("../examples/hello/agent.yaml")
	if err != nil {
		log.Fatal(err)
	}
	ws := exampleWorkspace(agent.WorkspaceDir())
	if _, err := x.eng.Run(x.ctx, host.RunOptions{Agent: agent, ID: id, Workspace: ws}); err != nil {
		log.Fatal(err)
	}
}

// agentFile writes an agent file and its script model's turns into the
// example's directory and loads it.
func (x *example) agentFile(name, file, script string) *host.AgentFile {
	dir := filepath.Join(x.dir, name)
	for f, content := range map[string]string{"agent.yaml": file, "script.yaml": script, "workspace/.keep": ""} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	agent, err := host.LoadAgentFile(filepath.Join(dir, "agent.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	return agent
}

// A file store keeps agents between processes; Inspect reads one.
func ExampleOpenStore() {
	x := newExample()
	defer x.close()
	x.runHello("hello-1")

	in, err := host.Inspect(context.Background(), x.store, "hello-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(in.Summary.Status, "at round", in.State.Round, "with", len(in.State.Messages), "messages")
	// Output:
	// done at round 5 with 10 messages
}

// A run that an approval rule stops waits for a person: Pending lists the
// calls, Decide records the answer and Resume carries it out.
func ExampleEngine_Decide() {
	x := newExample()
	defer x.close()
	agent := x.agentFile("ask", `
name: ask
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
approvals: [{tool: write_file, action: ask}]
`, `
turns:
  - tool_calls: [{name: write_file, input: {path: out.txt, content: approved}}]
  - text: Written.
`)
	res, err := x.eng.Run(x.ctx, host.RunOptions{Agent: agent, ID: "ask-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status)
	reqs, err := host.Pending(context.Background(), x.store, "ask-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reqs[0].Call.ID, reqs[0].Call.Tool)
	if err := x.eng.Decide(context.Background(), "ask-1", reqs[0].Call.ID, host.Decision{Approved: true}); err != nil {
		log.Fatal(err)
	}
	res, err = x.eng.Resume(x.ctx, host.ResumeOptions{ID: "ask-1"})
	if err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(x.dir, "ask", "workspace", "out.txt"))
	fmt.Println(res.Status, string(b))
	// Output:
	// awaiting_approval
	// call_1_0 write_file
	// done approved
}

// A run that a limit paused continues with Resume, which may raise the
// limit for its run.
func ExampleEngine_Resume() {
	x := newExample()
	defer x.close()
	agent := x.agentFile("slow", `
name: slow
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_rounds: 1}
`, `
turns:
  - tool_calls: [{name: list_dir, input: {path: .}}]
  - tool_calls: [{name: list_dir, input: {path: .}}]
  - text: Seen enough.
`)
	res, err := x.eng.Run(x.ctx, host.RunOptions{Agent: agent, ID: "slow-1"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, "after", res.Rounds, "round:", res.Reason)
	res, err = x.eng.Resume(x.ctx, host.ResumeOptions{ID: "slow-1", Limits: host.RunLimits{MaxRounds: 5}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, "after", res.Rounds, "rounds:", res.Text)
	// Output:
	// paused after 1 round: reached max_rounds (1 round since the prompt); resume with --max-rounds to allow more
	// done after 3 rounds: Seen enough.
}

// A side question is answered from a copy of the conversation, here by
// another model than the agent's; the agent is not changed.
func ExampleEngine_Ask() {
	x := newExample()
	defer x.close()
	x.runHello("hello-1")
	// A script plays the turn the conversation has reached: the sixth.
	answers := filepath.Join(x.dir, "answers.yaml")
	script := "turns: [{text: .}, {text: .}, {text: .}, {text: .}, {text: .}, {text: Two notes and three open items.}]\n"
	if err := os.WriteFile(answers, []byte(script), 0o644); err != nil {
		log.Fatal(err)
	}

	a, err := x.eng.Ask(x.ctx, host.AskOptions{ID: "hello-1", Question: "What did you find?",
		Model: &model.Spec{Provider: "script", Script: answers}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Text)
	in, _ := host.Inspect(context.Background(), x.store, "hello-1")
	fmt.Println(len(in.State.Messages), "messages, as before")
	// Output:
	// Two notes and three open items.
	// 10 messages, as before
}

// Changes shows what a round did to the workspace, and Undo takes it back.
func ExampleEngine_Undo() {
	x := newExample()
	defer x.close()
	x.runHello("hello-1")

	round, changes, err := x.eng.Changes(context.Background(), "hello-1", 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range changes {
		fmt.Println("round", round, c.Op, c.Path)
	}
	u, err := x.eng.Undo(context.Background(), "hello-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("undid round", u.Round, u.Restored)
	// Output:
	// round 4 write REPORT.md
	// undid round 4 [REPORT.md]
}

// A bookmark keeps a round and a copy of the workspace; a fork starts a
// new agent from it.
func ExampleEngine_Fork() {
	x := newExample()
	defer x.close()
	x.runHello("hello-1")

	b, err := x.eng.Snapshot(context.Background(), "hello-1", "reported")
	if err != nil {
		log.Fatal(err)
	}
	st, err := x.eng.Fork(context.Background(), host.ForkOptions{ID: "hello-1", From: b.Label, As: "hello-2"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Agent, "forked from", st.From, "at round", st.Round)
	// Output:
	// hello-2 forked from hello-1 at round 5
}

// The events of an agent's runs are kept and read back as they were shown.
func ExampleReadHistory() {
	x := newExample()
	defer x.close()
	x.runHello("hello-1")

	counts := map[host.EventType]int{}
	err := host.ReadHistory(x.ctx, x.store, "hello-1", false, func(e host.Event, _ []byte) error {
		counts[e.Type]++
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(counts[host.EventRunStart], "run,", counts[host.EventRoundEnd], "rounds,", counts[host.EventToolEnd], "calls")
	// Output:
	// 1 run, 5 rounds, 5 calls
}

// Collect reclaims space; with DryRun it only says what it would remove.
func ExampleCollect() {
	// A store that compacts at every commit, so that even this short run
	// leaves a snapshot older than the newest.
	x := newExample(checkpoint.WithCompactAfter(0))
	defer x.close()
	x.runHello("hello-1")

	got, err := host.Collect(context.Background(), x.store, checkpoint.Retention{Snapshots: 1, DryRun: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(got.Files) > 0, got.Bytes > 0, len(got.Skipped), "agents skipped")
	// Output:
	// true true 0 agents skipped
}

// The tools of a module are read from its manifest, without running it.
func ExampleModuleTools() {
	tools, err := host.ModuleTools(host.BuiltinModule, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Tool.Name, t.Tool.Mutates)
	}
	// Output:
	// read_file false
	// write_file true
	// edit_file true
	// list_dir false
	// glob false
	// grep false
}

// An agent file can come from bytes; relative paths in it are read
// against the directory given.
func ExampleParseAgentFile() {
	agent, err := host.ParseAgentFile([]byte(`
name: reader
model: {provider: script, script: turns.yaml}
workspace: .
tools: [{module: builtin}, {module: ../tools/textstats/textstats.wasm}]
limits: {max_rounds: 3}
`), "../examples/hello")
	if err != nil {
		log.Fatal(err)
	}
	tools, err := host.ListTools(agent)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(agent.Name, agent.Limits.MaxRounds, len(tools), "tools")
	// Output:
	// reader 3 7 tools
}
