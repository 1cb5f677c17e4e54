package workflow_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// Run the example workflow (every model a script) on a copy of its
// workspace, with the agents and the workflow's journal kept in memory.
func ExampleRun() {
	ctx := context.Background()
	eng, err := host.NewEngine(ctx, host.Config{CacheDir: cache}) // Store nil: in memory
	if err != nil {
		panic(err)
	}
	defer eng.Close(ctx)
	flow, err := workflow.Load("../../examples/workflow/flow.yaml")
	if err != nil {
		panic(err)
	}
	ws, _ := os.MkdirTemp("", "workflow-example-")
	defer os.RemoveAll(ws)
	notes, _ := os.ReadFile("../../examples/workflow/workspace/notes.md")
	os.WriteFile(filepath.Join(ws, "notes.md"), notes, 0o644)

	res, err := workflow.Run(ctx, eng, flow, workflow.Options{ID: "report-1", Workspace: ws})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.ID, res.Status)
	for _, name := range []string{"summary", "report", "review"} {
		step, _ := res.Record.Step(name)
		fmt.Printf("%s (agent %s): %s\n", name, step.Agent, step.Output)
	}
	// Output:
	// report-1 done
	// summary (agent report-1.summary): The ridge cairn survived the storm and needs a spring check.
	// report (agent report-1.report): REPORT.md is written.
	// review (agent report-1.review): The report is ready.
}
