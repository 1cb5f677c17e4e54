package host

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/checkpoint/conversation"
)

const askingAgent = `
name: asker
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
approvals: [{tool: write_file, action: ask}]
`

const askingScript = `
turns:
  - tool_calls: [{name: write_file, input: {path: a.txt, content: a}}]
  - text: wrote a.txt
`

// firstUserText is the text of an agent's first message, which must be
// the user's.
func firstUserText(t *testing.T, store checkpoint.Store, id string) string {
	t.Helper()
	rec, err := store.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.State.Messages) == 0 || rec.State.Messages[0].Role != conversation.RoleUser {
		t.Fatalf("agent %s's conversation does not begin with the user's message: %+v", id, rec.State.Messages)
	}
	return rec.State.Messages[0].Text
}

// Regression: a fork of an agent whose first round awaited a decision
// lost the prompt (it was in the open round) and claimed to await
// approval, which `cairn approve` of the fork refused; its resume asked the
// model with no user message. The fork keeps the prompt, is paused, and
// its resume asks the model with it.
func TestForkOfAnAgentAwaitingApprovalKeepsItsPrompt(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, askingAgent, askingScript)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "asker", Prompt: "write a.txt"})
	if err != nil || res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "asker", As: "copy", Workspace: filepath.Join(t.TempDir(), "ws")}); err != nil {
		t.Fatal(err)
	}
	sum, err := store.Summary("copy")
	if err != nil || sum.Status != checkpoint.StatusPaused {
		t.Fatalf("the fork: %+v, %v; want paused", sum, err)
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

// Regression: a fork at round 0 of a finished agent held no prompt, so its
// resume asked the model with no user message. It holds the prompt the
// agent's first round began with.
func TestForkAtRoundZeroKeepsThePrompt(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, askingAgent, askingScript)
	approve := func(context.Context, ApprovalRequest) (Decision, error) { return Decision{Approved: true}, nil }
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "asker", Prompt: "write a.txt", Approver: approve})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "asker", Past: true, AtRound: 0, As: "again", Workspace: filepath.Join(t.TempDir(), "ws")}); err != nil {
		t.Fatal(err)
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "again", Approver: approve})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("resume of the fork: %+v, %v", res, err)
	}
	if got := firstUserText(t, store, "again"); got != "write a.txt" {
		t.Fatalf("the fork's conversation begins %q, want the prompt", got)
	}
}

// A resume of an agent with no conversation and no prompt (a bookmark of
// a new agent's boundary, say) asks a provider nothing: a request of no
// messages is one no provider takes. It pauses, saying how to go on.
func TestResumeWithNothingToAskPauses(t *testing.T) {
	srv := openAIServer(t)
	eng, store := fileEngine(t)
	af := agentIn(t, fmt.Sprintf(`
name: remote
model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: -1}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
`, srv.URL), "")
	if _, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "seed", Prompt: "look"}); err != nil {
		t.Fatal(err)
	}
	seed, err := store.Read("seed")
	if err != nil {
		t.Fatal(err)
	}
	log, err := store.Create("empty", &checkpoint.State{Agent: "empty", Status: checkpoint.StatusPaused, Definition: seed.State.Definition})
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	before := srv.requests.Load()
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: "empty"})
	if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "cairn run --id empty PROMPT") {
		t.Fatalf("resume: %+v, %v; want paused, naming how to give a prompt", res, err)
	}
	if n := srv.requests.Load() - before; n != 0 {
		t.Fatalf("the resume sent %d requests of no messages", n)
	}
}
