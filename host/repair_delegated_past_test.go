package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Regression: a process killed between the commit of a round that handed
// tasks to sub-agents and the keeping of its past left the boundary with
// none, and the resume repaired it from the parent's file pool, which
// holds only the parent's own calls' changes: the sub-agents' files were
// missing from the repaired past, and a fork at that round or a resume on
// another node got a workspace without them. Such a round's past is the
// whole workspace, kept again at the resume.
func TestRepairedPastOfARoundThatDelegatedHoldsTheSubAgentsFiles(t *testing.T) {
	eng, store := fileEngine(t)
	agent := strings.Replace(teamAgent, "max_parallel: 2", "max_parallel: 2\nlimits: {max_rounds: 1}", 1)
	af := teamIn(t, agent, teamScript, nil)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	if err != nil || res.Status != StatusPaused || res.Rounds != 1 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	// The kill: the past file keeps round 0's past only.
	name := filepath.Join(store.(*checkpoint.FileStore).Dir(), "agents", "lead", "past")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	first := 9 + (int(data[0]) | int(data[1])<<8 | int(data[2])<<16)
	if err := os.WriteFile(name, data[:first], 0o600); err != nil {
		t.Fatal(err)
	}
	if res, err := eng.Resume(context.Background(), ResumeOptions{ID: "lead", Limits: RunLimits{MaxRounds: 3}}); err != nil || res.Status != StatusDone {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	for _, round := range []int{1, 2} {
		ws := filepath.Join(t.TempDir(), "ws")
		if _, err := eng.Fork(t.Context(), ForkOptions{ID: "lead", Past: true, AtRound: round, As: "at-" + string(rune('0'+round)), Workspace: ws}); err != nil {
			t.Fatalf("fork at round %d: %v", round, err)
		}
		for _, kid := range []string{"alpha", "beta"} {
			if got, _ := os.ReadFile(filepath.Join(ws, kid+".txt")); string(got) != kid {
				t.Errorf("the fork at round %d: %s.txt = %q, want what the sub-agent wrote", round, kid, got)
			}
		}
	}
}
