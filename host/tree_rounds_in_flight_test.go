package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// Regression: a tree's max_tokens was checked against what its agents'
// committed rounds had used, so sub-agents running in parallel each began
// a round while the budget had room for one, and all of them went on: the
// tree passed its budget by up to max_parallel rounds, and the turn of
// the lead that delegated counted only once its round committed. Four
// children, started at once, each with a round of a call that takes its
// time (spin, to its 300ms timeout), began a round each, whether the
// lead's turn had spent the budget or left it one token. Now the lead's
// turn counts as it is answered, and a round begins only when the budget
// has room for it and the rounds in flight, each counted as the largest
// round the tree has taken (here the lead's turn), or when none is in
// flight: with the budget spent no child sends a request; with a token
// left one child takes a round, the others stop before theirs, and the
// tree passes its budget by that round alone.
func TestParallelSubAgentsPassTheTreesBudgetByOneRoundAtMost(t *testing.T) {
	var lead, agents strings.Builder
	lead.WriteString("turns:\n  - tool_calls:\n")
	for i := range 4 {
		fmt.Fprintf(&lead, "      - {name: delegate, input: {agent: c%d, task: spin}}\n", i)
		fmt.Fprintf(&agents, "  - {name: c%d, description: spins, model: {provider: script, script: c.yaml}, tools: [{module: hostile.wasm, only: [spin]}]}\n", i)
	}
	lead.WriteString("  - text: lead done\n")
	agent := "name: lead\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n" +
		"tools: [{module: hostile.wasm, only: [spin]}]\nsandbox: {timeout: 300ms}\nmax_parallel: 4\nlimits: {max_tokens: %d}\nagents:\n" + agents.String()
	spin := "  - tool_calls: [{name: spin, input: {}}]\n"
	run := func(maxTokens int64) (*Result, []Event) {
		af := agentIn(t, fmt.Sprintf(agent, maxTokens), lead.String())
		copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
		must(t, os.WriteFile(filepath.Join(af.Dir, "c.yaml"), []byte("turns:\n"+spin+spin+"  - text: spun\n"), 0o644))
		eng, _ := fileEngine(t)
		var mu sync.Mutex
		var turns []Event
		res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go", OnEvent: func(e Event) {
			if e.Type == EventModelTurn {
				mu.Lock()
				turns = append(turns, e)
				mu.Unlock()
			}
		}})
		must(t, err)
		return res, turns
	}
	count := func(turns []Event) (children int, total conversation.Usage) {
		for _, e := range turns {
			total = total.Add(*e.Usage)
			if e.Agent != "lead" {
				children++
			}
		}
		return children, total
	}
	// The lead's turn, measured in a run the budget does not stop.
	_, turns := run(1 << 40)
	if len(turns) == 0 || turns[0].Agent != "lead" {
		t.Fatalf("turns %+v; want the lead's first", turns)
	}
	leadTurn := turns[0].Usage.Total()
	// A budget the lead's turn spends: no child sends a request.
	// A budget the lead's turn leaves one token of: one child takes a round.
	for budget, want := range map[int64]int{leadTurn: 0, leadTurn + 1: 1} {
		res, turns := run(budget)
		children, total := count(turns)
		if res.Status != StatusPaused || !strings.Contains(res.Reason, "the tree of lead reached max_tokens") || children != want {
			t.Fatalf("max_tokens %d: lead %+v; the children took %d rounds (the tree %d tokens); want the lead paused by its max_tokens after %d",
				budget, res, children, total.Total(), want)
		}
	}
}
