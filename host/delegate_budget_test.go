package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: `cairn resume CHILD`, a sub-agent resumed by itself, ran
// it past its tree's max_tokens, which only a resume of the parent
// counted. The tree's budget binds it too: it stops before another round
// and says to resume the top-level agent with more.
func TestResumeChildDirectlyKeepsTheTreesBudget(t *testing.T) {
	eng, store := fileEngine(t)
	agent := strings.Replace(editAgent, "tools: [{module: builtin}]\n", "tools: [{module: builtin}]\nlimits: {max_tokens: 4}\n", 1)
	af := teamIn(t, agent, editScript, map[string]string{"kid.yaml": kidScript})
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "log.txt"), []byte("START\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "the tree of lead reached max_tokens") {
		t.Fatalf("run: %+v, %v; want the tree's budget to pause it", res, err)
	}
	id, _ := kidDir(store)
	before, _ := store.Read(id)
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: id})
	if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "the tree of lead reached max_tokens") ||
		!strings.Contains(res.Reason, "resume lead with --max-tokens") {
		t.Fatalf("resume of the child alone: %+v, %v; want the tree's budget to pause it", res, err)
	}
	if after, _ := store.Read(id); after.State.Round != before.State.Round || after.State.Usage != before.State.Usage {
		t.Fatalf("the child went from round %d to %d past its tree's budget", before.State.Round, after.State.Round)
	}
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: "lead", Limits: RunLimits{MaxTokens: 1000}})
	if err != nil || res.Status != StatusDone || edits(t, af) != 1 {
		t.Fatalf("resume of the parent with more: %+v, %v; %d edits", res, err, edits(t, af))
	}
}
