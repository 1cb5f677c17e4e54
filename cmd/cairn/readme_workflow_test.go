package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/workflow"
)

// workflow is a workflow of the example flow in the fixture's store:
// stopped once its first step has completed when paused, else done.
func (fx *readmeFixture) workflow(paused bool) string {
	id := fmt.Sprintf("flow-%d", fx.n)
	if !paused {
		fx.run(exitDone, "workflow", "run", "--id", id, "--workspace", fx.workspace(), "examples/workflow/flow.yaml")
		return id
	}
	store, err := host.OpenStore(fx.store)
	must(fx.t, err)
	eng, err := host.NewEngine(context.Background(), host.Config{Store: store, CacheDir: cacheForTests(fx.t)})
	must(fx.t, err)
	defer eng.Close(context.Background())
	f, err := workflow.Load(filepath.Join(fx.root, "examples/workflow/flow.yaml"))
	must(fx.t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := workflow.Run(ctx, eng, f, workflow.Options{ID: id, Workspace: fx.workspace(), OnStep: func(ev workflow.StepEvent) {
		if ev.Type == "done" {
			cancel()
		}
	}})
	must(fx.t, err)
	if res.Status != checkpoint.StatusPaused {
		fx.t.Fatalf("the workflow to resume is %s, not paused", res.Status)
	}
	return id
}

// workflowRunning is a workflow of the example flow whose first step's
// agent a run holds, as when the workflow runs it.
func (fx *readmeFixture) workflowRunning() string {
	id := fx.workflow(true)
	store, err := checkpoint.OpenFileStore(fx.store)
	must(fx.t, err)
	lock, err := store.Lock(workflow.StepAgent(id, "notes"), checkpoint.ThisProcess("run-readme"))
	must(fx.t, err)
	fx.t.Cleanup(func() { lock.Unlock() })
	return id
}

// fact is a memory namespace of the fixture's store that holds the fact
// of key k.
func (fx *readmeFixture) fact() string {
	ns := fmt.Sprintf("team-%d", fx.n)
	store, err := checkpoint.OpenFileStore(fx.store)
	must(fx.t, err)
	must(fx.t, store.Remember(ns, checkpoint.Fact{Key: "k", Text: "a fact"}))
	return ns
}
