package filepool_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/filepool"
)

// The agent reads a file in round 1; someone edits it while the agent is
// down; on resume, Reconcile finds the edit and Summary tells the model.
func Example() {
	workspace, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(workspace)
	notes := filepath.Join(workspace, "notes.md")
	os.WriteFile(notes, []byte("# Notes\n"), 0o644)
	ctx := context.Background()

	pool, _ := filepool.New(workspace, filepool.State{}, filepool.Config{})
	pool.Saw(ctx, "notes.md", 1, "call-1", filepool.OpRead)
	checkpointed := pool.State()
	pool.Close()

	os.WriteFile(notes, []byte("# Notes\n\n- buy milk\n"), 0o644)

	pool, _ = filepool.New(workspace, checkpointed, filepool.Config{})
	defer pool.Close()
	changes, _ := pool.Reconcile(ctx)
	fmt.Println(filepool.Summary(changes))
	pool.Accept(changes)
	// Output:
	// notes.md was modified outside the agent (8 → 20 bytes).
}

func ExampleSummary() {
	fmt.Println(filepool.Summary([]filepool.Change{
		{Path: "notes.md", Kind: filepool.Modified, Was: filepool.Entry{Size: 291}, Now: filepool.Version{Exists: true, Size: 340}},
		{Path: "draft.md", Kind: filepool.Deleted},
		{Path: "todo.md", Kind: filepool.Created, Now: filepool.Version{Exists: true, Size: 12}},
		{Path: "data", Kind: filepool.Unreadable, Reason: "a directory"},
	}))
	// Output:
	// notes.md was modified outside the agent (291 → 340 bytes).
	// draft.md was deleted outside the agent.
	// todo.md was created outside the agent (12 bytes).
	// data was replaced outside the agent by something a tool cannot read (a directory).
}
