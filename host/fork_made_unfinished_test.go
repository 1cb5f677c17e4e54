package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Regression: a fork killed once it had made the new agent, before it
// journaled the prompt the source's open round began with, left an agent
// without it, and the same fork run again took the agent as made and only
// removed its mark: the fork's resume asked the model with no prompt. The
// fork's steps are run as the killed fork ran them, up to the agent's
// making; the same fork run again journals the prompt, and the fork's
// resume asks the model with it.
func TestForkRunAgainAfterItMadeTheAgentJournalsItsPrompt(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, askingAgent, askingScript)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "asker", Prompt: "write a.txt"})
	if err != nil || res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v, %v", res, err)
	}
	opts := ForkOptions{ID: "asker", As: "copy", Workspace: filepath.Join(t.TempDir(), "ws")}
	// What the fork killed once it made the agent leaves.
	src, ws, err := eng.forkFrom(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(opts.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.fillForkWorkspace(ws, opts.Workspace, forkMark{Agent: "copy", From: "asker", Round: src.Round}); err != nil {
		t.Fatal(err)
	}
	st, err := forkedState(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	log, err := store.Create("copy", st)
	if err != nil {
		t.Fatal(err)
	}
	log.Close()

	if _, err := eng.Fork(t.Context(), opts); err != nil {
		t.Fatalf("the same fork run again: %v", err)
	}
	approve := func(context.Context, ApprovalRequest) (Decision, error) { return Decision{Approved: true}, nil }
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "copy", Approver: approve})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("resume of the fork: %+v, %v", res, err)
	}
	if got := firstUserText(t, store, "copy"); got != "write a.txt" {
		t.Fatalf("the fork's conversation begins %q, want the prompt", got)
	}
}
