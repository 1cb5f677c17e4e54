package host_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"

	"github.com/cairnrun/cairn/host"
)

// An embedder runs an agent from its agent file and receives the same
// events the command line prints.
func ExampleEngine_Run() {
	ctx := context.Background()
	eng, err := host.NewEngine(ctx, host.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close(ctx)

	agent, err := host.LoadAgentFile("../examples/hello/agent.yaml")
	if err != nil {
		log.Fatal(err)
	}
	workspace := exampleWorkspace(agent.WorkspaceDir())
	defer os.RemoveAll(workspace)

	var tools []string
	res, err := eng.Run(ctx, host.RunOptions{
		Agent:     agent,
		Workspace: workspace,
		Prompt:    "Summarise the notes into REPORT.md.",
		OnEvent: func(e host.Event) {
			if e.Type == host.EventToolEnd {
				tools = append(tools, fmt.Sprintf("%s: %s", e.Call.Tool, e.Call.Outcome))
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	sort.Strings(tools) // calls of one round run concurrently
	for _, t := range tools {
		fmt.Println(t)
	}
	fmt.Println(res.Status, "after", res.Rounds, "rounds")
	// Output:
	// grep: ok
	// list_dir: ok
	// read_file: ok
	// text_stats: ok
	// write_file: ok
	// done after 5 rounds
}

// exampleWorkspace copies the example's workspace so the example leaves it
// as it was.
func exampleWorkspace(from string) string {
	dir, err := os.MkdirTemp("", "cairn-example-")
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"notes.md", "todo.txt"} {
		b, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	return dir
}
