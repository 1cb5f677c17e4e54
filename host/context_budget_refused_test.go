package host

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: an agent file whose context budget could not hold even its
// system prompt and tools was read as valid, and its run failed at its
// first request, after the agent had been stored. Where the file alone
// shows it (the system prompt, the built-in tools, cairn's own tools),
// reading the file refuses it, naming the line of the budget.
func TestContextBudgetTooSmallIsRefusedWhenTheFileIsRead(t *testing.T) {
	const head = "name: a\nmodel: {provider: script}\n"
	cases := []struct {
		name, yaml string
		line       string
	}{
		{"built-in tools", head + "tools: [{module: builtin}]\ncontext: {budget: 1000}\n", "line 4: "},
		{"system prompt", head + "system: |\n  " + strings.Repeat("Be careful. ", 150) + "\ntools: [{module: builtin, only: [read_file]}]\ncontext:\n  policy: drop\n  budget: 800\n",
			"line 8: "},
		// One tool alone fits; the delegate, task list and memory tools
		// cairn adds for the file do not.
		{"cairn's tools", head + "tools: [{module: builtin, only: [read_file]}]\ntodos: true\nmemory: notes\n" +
			"agents: [{name: helper, description: does what it is told, file: helper.yaml}]\ncontext: {budget: 1000}\n", "line 7: "},
	}
	if _, err := ParseAgentFile([]byte(head+"tools: [{module: builtin, only: [read_file]}]\ncontext: {budget: 1000}\n"), t.TempDir()); err != nil {
		t.Fatalf("one tool in a budget of 1000: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseAgentFile([]byte(c.yaml), t.TempDir())
			if !errors.Is(err, ErrContextBudget) || !strings.HasPrefix(err.Error(), c.line+"context budget too small") ||
				!strings.Contains(err.Error(), "alone take about") || !strings.Contains(err.Error(), "set context.budget to") {
				t.Fatalf("err = %v; want ErrContextBudget at %q saying what they take", err, c.line)
			}
			// The budget it names holds them.
			least := err.Error()[strings.Index(err.Error(), "set context.budget to ")+len("set context.budget to "):]
			least = strings.Fields(least)[0]
			fixed := strings.Replace(c.yaml, "budget: 1000", "budget: "+least, 1)
			fixed = strings.Replace(fixed, "budget: 800", "budget: "+least, 1)
			if _, err := ParseAgentFile([]byte(fixed), t.TempDir()); err != nil {
				t.Fatalf("with the budget the error names (%s): %v", least, err)
			}
		})
	}
}

// stats is an agent file whose one tool module is a file: its tools are
// known only once its manifest is read.
const stats = `name: stats
model: {provider: script, script: script.yaml}
system: Count words.
workspace: workspace
tools: [{module: textstats.wasm, grant: {workspace: ro}}]
context: {budget: 256}
`

// statsIn writes the stats agent file, its script and its module.
func statsIn(t *testing.T, agent string) *AgentFile {
	t.Helper()
	af := agentIn(t, agent, "turns: [{text: counted}]\n")
	copyFile(t, filepath.Join("..", "examples", "tools", "textstats", "textstats.wasm"), filepath.Join(af.Dir, "textstats.wasm"))
	return af
}

// Regression: a budget that a module's tools leave no room in failed the
// run at its first request, and the agent stayed in the store, failed. The
// run is refused before anything of the agent is stored.
func TestContextBudgetTooSmallForItsModulesStoresNothing(t *testing.T) {
	rec := &recorder{t: t, budget: 256}
	eng, store := recordingEngine(t, rec, nil)
	af := statsIn(t, stats) // the file alone holds: only its system prompt is known
	_, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "stats", Prompt: "go"})
	if !errors.Is(err, ErrContextBudget) || !strings.Contains(err.Error(), "the tool's description alone take about") || rec.turns != 0 {
		t.Fatalf("run: %v, %d requests; want ErrContextBudget before any request", err, rec.turns)
	}
	noAgentDir(t, store, "stats")

	af = statsIn(t, strings.Replace(stats, "budget: 256", "budget: 600", 1))
	if res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "stats", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run with room: %+v, %v", res, err)
	}
}

// bigServer is an MCP server whose one tool's description is long.
type bigServer struct{}

func (bigServer) Tools() []ExternalTool {
	return []ExternalTool{{Name: "lookup", Description: strings.Repeat("Looks a word up. ", 100),
		InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

func (bigServer) Call(context.Context, string, json.RawMessage) (string, bool, error) {
	return "found", false, nil
}

func (bigServer) Close() error { return nil }

// An MCP server's tools are known only once it is connected, after the
// agent is stored: a budget they leave no room in is refused there, before
// the run begins, and the agent made for it is removed.
func TestContextBudgetTooSmallForItsMCPToolsStoresNothing(t *testing.T) {
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	connect := func(context.Context, MCPServer, string, Limits) (ExternalTools, error) { return bigServer{}, nil }
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store, Connect: connect})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	af := agentIn(t, "name: words\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n"+
		"mcp: [{name: dict, command: [dict]}]\ncontext: {budget: 600}\n", "turns: [{text: found}]\n")
	_, err = eng.Run(context.Background(), RunOptions{Agent: af, ID: "words", Prompt: "go"})
	if !errors.Is(err, ErrContextBudget) {
		t.Fatalf("run: %v; want ErrContextBudget", err)
	}
	noAgentDir(t, store, "words")
}
