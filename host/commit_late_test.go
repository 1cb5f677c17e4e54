package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// A round's commit syncs while the next round begins, and the events that
// tell of it (checkpoint_saved, round_end, the tool_end of the call
// journaled with it) and every event after them wait until it is
// durable: the k-th checkpoint_saved is told only once k syncs of the
// journal have returned (each round here syncs its journal once, at its
// commit). The syncs' reports are slowed, so that an event told early
// would be told before its sync's report; every event still comes, once,
// in order.
func TestCommitEventsWaitForTheCommitToBeDurable(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, `
name: late
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
`, `
turns:
  - tool_calls: [{name: read_file, input: {path: a.md}}]
  - tool_calls: [{name: read_file, input: {path: a.md}}]
  - tool_calls: [{name: read_file, input: {path: a.md}}]
  - text: done
`)
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "a.md"), []byte("a line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var synced atomic.Int32
	stop := syncpoint.Observe(func(path string) {
		if strings.HasPrefix(filepath.Base(path), "journal-") {
			time.Sleep(10 * time.Millisecond)
			synced.Add(1)
		}
	})
	defer stop()
	var types, early []string
	saved := int32(0)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "late", Prompt: "go", OnEvent: func(e Event) {
		types = append(types, string(e.Type))
		if e.Type == EventCheckpointSaved {
			if saved++; synced.Load() < saved {
				early = append(early, fmt.Sprintf("round %d after %d syncs", e.Round, synced.Load()))
			}
		}
	}})
	if err != nil || res.Status != StatusDone || res.Rounds != 4 {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if len(early) > 0 {
		t.Fatalf("checkpoint_saved told before its commit was durable: %v", early)
	}
	if got := strings.Count(strings.Join(types, " "), string(EventCheckpointSaved)); got != 4 {
		t.Fatalf("%d checkpoint_saved events, want 4: %v", got, types)
	}
	var turns []string
	for _, typ := range types {
		if typ == string(EventModelTurn) || typ == string(EventRoundEnd) {
			turns = append(turns, typ)
		}
	}
	if got, want := strings.Join(turns, " "), strings.Repeat("model_turn round_end ", 4); got+" " != want {
		t.Fatalf("the rounds' turns and ends came as %q, want %q", got, want)
	}
	if types[len(types)-1] != string(EventRunEnd) {
		t.Fatalf("the last event is %s, want run_end: %v", types[len(types)-1], types)
	}
}
