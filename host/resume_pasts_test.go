package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// pastsCounter is a FileStore that counts the calls of Pasts, which reads
// every past of an agent.
type pastsCounter struct {
	*checkpoint.FileStore
	pasts atomic.Int32
}

func (s *pastsCounter) Pasts(agent string) ([]checkpoint.Past, error) {
	s.pasts.Add(1)
	return s.FileStore.Pasts(agent)
}

// manyRounds runs an agent "a" of rounds rounds, each writing a file of
// its own, paused at its max_rounds so that it can be resumed, on a store
// that counts its reads of every past.
func manyRounds(t *testing.T, rounds int) (*Engine, *pastsCounter) {
	t.Helper()
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := range rounds + 2 {
		fmt.Fprintf(&script, "  - tool_calls: [{name: write_file, input: {path: f%d.txt, content: round %d}}]\n", i+1, i+1)
	}
	af := agentIn(t, fmt.Sprintf(`
name: many
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
limits: {max_rounds: %d}
`, rounds), script.String())
	fs, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := &pastsCounter{FileStore: fs}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"})
	if err != nil || res.Status != StatusPaused || res.Rounds != rounds {
		t.Fatalf("run: %+v, %v", res, err)
	}
	return eng, store
}

// Resuming an agent of many rounds reads its newest past, not all of them
// (FileStore.Pasts is not called), and the pasts it then keeps are as
// whole as before: cairn log, fork and changes still see every round.
func TestResumeReadsOnlyTheNewestPast(t *testing.T) {
	const rounds = 70
	eng, store := manyRounds(t, rounds)
	store.pasts.Store(0)
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Limits: RunLimits{MaxRounds: rounds + 2}})
	if err != nil || res.Status != StatusPaused || res.Rounds != rounds+2 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if n := store.pasts.Load(); n != 0 {
		t.Fatalf("resume read every past %d times", n)
	}
	wantEveryPast(t, eng, store, rounds+2)
}

// A store that a cairn without the past file's index wrote resumes too:
// the newest past is found by reading the whole file, once.
func TestResumeWithoutPastIndex(t *testing.T) {
	const rounds = 40
	eng, store := manyRounds(t, rounds)
	index := filepath.Join(store.Dir(), "agents", "a", "past-index")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Limits: RunLimits{MaxRounds: rounds + 2}})
	if err != nil || res.Status != StatusPaused || res.Rounds != rounds+2 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	wantEveryPast(t, eng, store, rounds+2)
}

// wantEveryPast checks that the store keeps a past of each round 0 to
// rounds of agent "a", one after the other, and that log, fork and
// changes read an early one.
func wantEveryPast(t *testing.T, eng *Engine, store checkpoint.Store, rounds int) {
	t.Helper()
	pasts, err := store.(checkpoint.Timeline).Pasts("a")
	if err != nil || len(pasts) != rounds+1 {
		t.Fatalf("pasts: %d, %v; want %d", len(pasts), err, rounds+1)
	}
	for i, p := range pasts {
		if p.Round != i {
			t.Fatalf("past %d is of round %d", i, p.Round)
		}
	}
	msgs, _, err := RoundMessages(t.Context(), store, "a", 2)
	if err != nil || len(msgs) != 2 || !strings.Contains(msgs[0].ToolCalls[0].Input, "f2.txt") {
		t.Fatalf("round 2's messages: %+v, %v", msgs, err)
	}
	_, changes, err := eng.Changes(t.Context(), "a", 3)
	if err != nil || len(changes) != 1 || changes[0].Path != "f3.txt" {
		t.Fatalf("round 3's changes: %+v, %v", changes, err)
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if _, err := eng.Fork(t.Context(), ForkOptions{ID: "a", Past: true, AtRound: 3, As: "early", Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	if readFile(t, ws, "f3.txt") != "round 3" || readFile(t, ws, "f4.txt") != "" {
		t.Fatal("the fork at round 3 has not the workspace of round 3")
	}
	if _, ok, err := store.(checkpoint.Timeline).NewestPast("a"); !ok || err != nil {
		t.Fatalf("newest past: %v, %v", ok, err)
	}
}
