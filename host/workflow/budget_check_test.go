package workflow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a step's agent whose context: budget its module's tools
// leave no room in (known only once the module's manifest is read) was
// accepted by the workflow check and failed when the step started, after
// the steps before it had run. host.CheckTools now checks the budget
// against the tools too, so Run refuses it before anything is stored.
func TestStepBudgetCheckedAgainstItsModulesTools(t *testing.T) {
	module, err := filepath.Abs(filepath.Join("..", "..", "examples", "tools", "textstats", "textstats.wasm"))
	must(t, err)
	const budget = 300 // room for the prompt alone, not for textstats' tools
	files := map[string]string{
		"flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
			"  - {name: a, tool: write_file, module: builtin, input: {path: a.txt, content: ran}}\n" +
			"  - {name: b, needs: [a], agent: small.yaml, prompt: x}\n",
		"small.yaml": "name: small\nmodel: {provider: script, script: script.yaml}\n" +
			"tools: [{module: " + module + ", grant: {workspace: ro}}]\ncontext: {budget: 300}\n",
	}
	for k, v := range goodFiles {
		files[k] = v
	}
	dir := flowDir(t, files)
	if _, err := host.LoadAgentFile(filepath.Join(dir, "small.yaml")); err != nil {
		t.Fatalf("the agent file alone must pass (its module's tools are not known yet) for the test to mean anything: %v", err)
	}
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	store := checkpoint.NewMemStore()
	_, err = workflow.Run(context.Background(), engine(t, store), f, workflow.Options{ID: "wf"})
	if !errors.Is(err, workflow.ErrFlow) || !errors.Is(err, host.ErrContextBudget) || !strings.Contains(err.Error(), "step b: ") {
		t.Fatalf("got %v; want ErrFlow and ErrContextBudget naming step b (budget %d)", err, budget)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws", "a.txt")); !os.IsNotExist(err) {
		t.Errorf("step a ran (%v)", err)
	}
	if agents, _ := store.List(); len(agents) != 0 {
		t.Errorf("stored agents %v", agents)
	}
}
