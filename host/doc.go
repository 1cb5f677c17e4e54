// Package host runs agents: it is cairn's library, and the command line is
// a thin layer over it. An agent is an agent file (model, system prompt,
// tools and what they are granted, approvals, limits) bound to an id, a
// workspace directory and a place in a store. Every round of an agent (one
// model turn and the tool calls it asked for) is committed to the store
// before the next begins, so an agent outlives the process that ran it.
//
// The life of an agent, each step one call (the example of each shows it
// running):
//
//	store, err := host.OpenStore(dir)                           // or Config{} alone: agents in memory
//	eng, err := host.NewEngine(ctx, host.Config{Store: store, CacheDir: cacheDir})
//	defer eng.Close(ctx)
//	agent, err := host.LoadAgentFile("agent.yaml")
//	res, err := eng.Run(ctx, host.RunOptions{Agent: agent, ID: "a1", Prompt: "…", OnEvent: show})
//
//	// res.Status says how the run ended: StatusDone, or StatusPaused (a
//	// limit, a cancelled ctx, a model that stayed unavailable), or
//	// StatusAwaitingApproval (an `ask` rule matched and no Approver said):
//	reqs, err := host.Pending(ctx, store, "a1")                 // the calls that wait
//	err = eng.Decide(ctx, "a1", reqs[0].Call.ID, host.Decision{Approved: true})
//	res, err = eng.Resume(ctx, host.ResumeOptions{ID: "a1"})    // also after a crash
//
//	in, err := host.Inspect(ctx, store, "a1")                   // state, conversation, bookmarks
//	err = host.ReadHistory(ctx, store, "a1", false, fn)         // the events, as shown live
//	a, err := eng.Ask(ctx, host.AskOptions{ID: "a1", Question: "…"}) // nothing is added
//	round, changes, err := eng.Changes(ctx, "a1", 0)            // what a round did to the workspace
//	undone, err := eng.Undo(ctx, "a1")                          // and taking it back
//	rep, err := eng.Verify(ctx, "a1", host.VerifyOptions{})     // run recorded calls again, compare
//	b, err := eng.Snapshot(ctx, "a1", "before-refactor")        // a bookmark with a workspace copy
//	f, err := eng.Fork(ctx, host.ForkOptions{ID: "a1", From: "before-refactor", As: "a2"}) // f.Agent is "a2"
//	got, err := host.Collect(ctx, store, checkpoint.Retention{Snapshots: 1}) // reclaim space
//
// A run that a process did not finish (kill -9, power loss, ctx ended) is
// resumed with Resume; Run refuses it with ErrInterrupted. Resume seals the
// calls that were in flight: see ResumeOptions and Strategy.
//
// # Errors
//
// Sentinels a caller branches on: checkpoint.ErrNotFound (no such agent),
// checkpoint.ErrLocked (another process runs it; a *checkpoint.LockedError
// names the holder), ErrInterrupted, ErrNotAwaiting, ErrNoChanges, and
// ErrEngineClosed for an Engine used after Close, and ErrNoEngine,
// ErrNoStore and ErrNoAgentFile for an Engine not made by
// NewEngine, a nil store (an OpenStore whose error was dropped) or
// RunOptions without an agent; ErrMissing when a file the agent file names
// (its workspace, a tool module, the model's script) is not there. No entry
// point panics on zero values.
//
// Every method that locks an agent or does I/O takes a context first; the
// stores' operations take none, so such a call stops at its start once ctx
// is done, and a run stops at its next round boundary.
//
// The conversation's types (messages, tool calls, usage) are in
// checkpoint/conversation, a leaf package.
//
// # Concurrency
//
// An Engine is safe for concurrent use by runs of different agents; the
// store's per-agent lock keeps one agent to one run, across processes too.
package host
