package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/sandbox"
)

// readFileToolset makes a workspace holding f.txt, 100 lines of text, and
// a toolset of the built-in tools on it; it returns the toolset, the
// workspace and the view of round 1's calls.
func readFileToolset(tb testing.TB) (*toolset, string, workspaceView) {
	ctx := context.Background()
	dir := tb.TempDir()
	ws := filepath.Join(dir, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		tb.Fatal(err)
	}
	content := []byte(strings.Repeat("a line of text in the file\n", 100))
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), content, 0o644); err != nil {
		tb.Fatal(err)
	}
	af, err := ParseAgentFile([]byte("name: bench\nmodel: {provider: script, script: s.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n"), dir)
	if err != nil {
		tb.Fatal(err)
	}
	mods, err := loadModules(af)
	if err != nil {
		tb.Fatal(err)
	}
	rt, err := sandbox.NewRuntime(ctx, sandbox.Config{CacheDir: testCache})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close(ctx) })
	ts, err := newToolset(ctx, rt, af, mods)
	if err != nil {
		tb.Fatal(err)
	}
	view := workspaceView{dir: ws, staging: func(call string) string { return filepath.Join(dir, "staging", "round-1", call) }}
	return ts, ws, view
}

// A turn's calls run at once, and their results come back in the order
// the model asked for them: each call here starts only once every call of
// the turn has begun, which calls run one after another never do.
func TestTurnCallsRunAtOnce(t *testing.T) {
	ts, _, view := readFileToolset(t)
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("calls-%d", n), func(t *testing.T) {
			calls := make([]conversation.ToolCall, n)
			for i := range calls {
				calls[i] = conversation.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read_file",
					Input: fmt.Sprintf(`{"path":"f.txt","offset":%d,"limit":1}`, i+1)}
			}
			var begun sync.WaitGroup
			begun.Add(n)
			all := make(chan struct{})
			go func() { begun.Wait(); close(all) }()
			var mu sync.Mutex
			var ended []string
			results := ts.runCalls(func(conversation.ToolCall) context.Context { return context.Background() }, view, calls,
				func(c conversation.ToolCall) {
					begun.Done()
					select {
					case <-all:
					case <-time.After(10 * time.Second):
						t.Errorf("call %s: the turn's other calls did not begin while it waited", c.ID)
					}
				},
				func(res *callResult) {
					mu.Lock()
					ended = append(ended, res.call.ID)
					mu.Unlock()
				})
			if len(results) != n || len(ended) != n {
				t.Fatalf("%d results and %d ends for %d calls", len(results), len(ended), n)
			}
			for i, res := range results {
				want := fmt.Sprintf("%6d\ta line of text in the file", i+1)
				if res.call.ID != calls[i].ID || res.isError || !strings.HasPrefix(res.output, want) {
					t.Errorf("result %d: call %s, error %v, output %q; want call %s starting %q",
						i, res.call.ID, res.isError, res.output, calls[i].ID, want)
				}
			}
		})
	}
}
