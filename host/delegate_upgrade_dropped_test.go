package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn resume --upgrade PARENT` with an agent file that no
// longer declares the sub-agent of a delegation in flight gave the call
// the result that its arguments did not match the tool's schema, as if
// it had never run, while its child had begun and changed the workspace:
// the child was left interrupted, its changes and tokens unaccounted. The
// upgrade is refused, nothing journaled, naming the sub-agent; without
// --upgrade the child goes on and its answer reaches the parent.
func TestUpgradeDroppingASubAgentInFlightIsRefused(t *testing.T) {
	eng, store := fileEngine(t)
	dir := editTeam(t).Dir
	file := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(file, []byte(editAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	af, err := LoadAgentFile(file)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := kidDir(store)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "lead", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventRoundEnd && e.Agent == id && e.Round == 2 {
			cancel()
		}
	}})
	if err != nil || res.Status != StatusPaused || edits(t, af) != 1 {
		t.Fatalf("run: %+v, %v; want it paused with the kid's edit made", res, err)
	}
	renamed := strings.Replace(editAgent, "  - name: kid\n", "  - name: other\n", 1)
	if err := os.WriteFile(file, []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := store.Read("lead")
	_, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead", Upgrade: true})
	if err == nil || !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), "call_1_0") || !strings.Contains(err.Error(), `"kid"`) {
		t.Fatalf("resume --upgrade: %v; want it refused naming the delegation and its sub-agent", err)
	}
	after, _ := store.Read("lead")
	if len(after.Tail) != len(before.Tail) || after.State.Round != before.State.Round {
		t.Fatalf("the refused upgrade journaled: tail %d -> %d records", len(before.Tail), len(after.Tail))
	}
	if err := os.WriteFile(file, []byte(editAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead"})
	if err != nil || res.Status != StatusDone || edits(t, af) != 1 {
		t.Fatalf("resume: %+v, %v; %d edits", res, err, edits(t, af))
	}
	rec, _ := store.Read("lead")
	if got := toolTexts(rec.State); len(got) != 1 || got[0] != "kid done" {
		t.Fatalf("the delegation's result: %q; want the kid's answer", got)
	}
}
