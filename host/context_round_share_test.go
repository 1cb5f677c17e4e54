package host

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host/model"
)

// parallelReads is an agent under a budget of 3,000 whose every round
// reads four parts of 200 lines of one file at once, for rounds rounds.
func parallelReads(t *testing.T, rounds int) *AgentFile {
	t.Helper()
	var script strings.Builder
	script.WriteString("turns:\n")
	for range rounds {
		script.WriteString("  - tool_calls:\n")
		for _, offset := range []int{1, 201, 401, 601} {
			fmt.Fprintf(&script, "      - {name: read_file, input: {path: big.txt, offset: %d, limit: 200}}\n", offset)
		}
	}
	script.WriteString("  - text: done\n")
	af := agentIn(t, "name: parallel\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\n"+
		"tools: [{module: builtin}]\ncontext: {budget: 3000}\n", script.String())
	var big strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&big, "line %d of the big file, with some words to make it longer than a short line is\n", i)
	}
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "big.txt"), []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return af
}

// failAt is a model that is unavailable at its turn request number at,
// and passes every other request on.
type failAt struct {
	model.Provider
	at, turns int
}

func (f *failAt) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if req.Purpose == model.PurposeTurn {
		if f.turns++; f.turns == f.at {
			return model.Response{}, fmt.Errorf("%w: the test's outage", model.ErrUnavailable)
		}
	}
	return f.Provider.Complete(ctx, req)
}

// Regression: under the default max_tool_result, a round of four parallel
// reads cut each result to a quarter of the budget alone, so the round
// needed more than the whole budget, and the agent failed for good: every
// resume failed the same way. The results of a round now share what is
// left of the budget; the run goes to its end within the budget, and a
// resume sends the request the uninterrupted run sent.
func TestContextParallelResultsShareTheBudget(t *testing.T) {
	const rounds = 5
	rec := &recorder{t: t, budget: 3000, keep: map[int]bool{4: true}, requests: map[int][]byte{}}
	eng, _ := recordingEngine(t, rec, nil)
	res, err := eng.Run(context.Background(), RunOptions{Agent: parallelReads(t, rounds), ID: "whole", Prompt: "Read big.txt in parts."})
	if err != nil || res.Status != StatusDone || res.Rounds != rounds+1 {
		t.Fatalf("run: %+v, %v; want done after %d rounds", res, err, rounds+1)
	}
	if len(rec.over) > 0 || len(rec.bad) > 0 || rec.truncated == 0 {
		t.Fatalf("requests over the budget: %v; parting a call from its result: %v; results shown cut: %d", rec.over, rec.bad, rec.truncated)
	}

	// The same agent, its model out at the fourth request, resumed.
	rec2 := &recorder{t: t, budget: 3000}
	eng2, _ := recordingEngine(t, rec2, nil)
	eng2.wrapModel = func(p model.Provider) model.Provider {
		rec2.Provider = &failAt{Provider: p, at: 4}
		return rec2
	}
	res, err = eng2.Run(context.Background(), RunOptions{Agent: parallelReads(t, rounds), ID: "cut", Prompt: "Read big.txt in parts."})
	if err != nil || res.Status != StatusPaused {
		t.Fatalf("run with the model out: %+v, %v; want paused", res, err)
	}
	rec2.mu.Lock()
	rec2.first = nil
	rec2.mu.Unlock()
	res, err = eng2.Resume(context.Background(), ResumeOptions{ID: "cut"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("resume: %+v, %v; want done", res, err)
	}
	if !bytes.Equal(rec2.first, rec.requests[4]) {
		t.Fatalf("the resumed run's first request differs from the uninterrupted run's:\nwhole:   %.600s\nresumed: %.600s", rec.requests[4], rec2.first)
	}
}

// A round's results share what is left: those within an even share are
// whole, the others take even shares of the rest, within the ceiling and
// not below the floor.
func TestShareOut(t *testing.T) {
	for _, c := range []struct {
		want         []int
		total, floor int
		caps         []int
	}{
		{[]int{1000, 1000, 1000, 1000}, 2000, 35, []int{500, 500, 500, 500}},
		{[]int{1000, 10, 1000, 90}, 1000, 35, []int{450, 10, 450, 90}},
		{[]int{100, 200}, 5000, 35, []int{100, 200}},
		{[]int{5000, 5000}, 5000, 35, []int{750, 750}}, // the ceiling
		{[]int{500, 500, 500}, 60, 35, []int{35, 35, 35}},
	} {
		if got := shareOut(c.want, c.total, 750, c.floor); !slices.Equal(got, c.caps) {
			t.Errorf("shareOut(%v, %d): %v, want %v", c.want, c.total, got, c.caps)
		}
	}
}
