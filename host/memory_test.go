package host

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/internal/syncpoint"
)

const memoryAgent = `
name: rememberer
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
memory: team
`

const rememberScript = `
turns:
  - tool_calls: [{name: remember, input: {key: build, fact: run make all before a release}}]
  - text: noted
`

const recallScript = `
turns:
  - tool_calls: [{name: recall, input: {query: RELEASE}}]
  - alternatives:
      - when: {tool: recall, contains: make all}
        text: found it
      - text: nothing
`

func facts(t *testing.T, store checkpoint.Store, ns string) []checkpoint.Fact {
	t.Helper()
	fs, err := store.(checkpoint.Memory).Recall(ns)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// A fact one agent remembers is stored with who wrote it, is recalled by
// another agent naming the same namespace, and survives a --fresh run of
// the agent that wrote it; forget removes it.
func TestMemorySharedAndKept(t *testing.T) {
	eng, store := fileEngine(t)
	ctx := context.Background()
	writer := agentIn(t, memoryAgent, rememberScript)
	if res, err := eng.Run(ctx, RunOptions{Agent: writer, ID: "w", Prompt: "note the build"}); err != nil || res.Status != StatusDone {
		t.Fatalf("writer: %+v, %v", res, err)
	}
	got := facts(t, store, "team")
	if len(got) != 1 || got[0].Text != "run make all before a release" || got[0].Agent != "w" || got[0].Round != 1 || got[0].Call != "call_1_0" {
		t.Fatalf("facts: %+v", got)
	}
	reader := agentIn(t, memoryAgent, recallScript)
	if res, err := eng.Run(ctx, RunOptions{Agent: reader, ID: "r", Prompt: "how do we build?"}); err != nil || res.Text != "found it" {
		t.Fatalf("reader: %+v, %v", res, err)
	}
	if _, err := eng.Run(ctx, RunOptions{Agent: agentIn(t, memoryAgent, "turns: [{text: hi}]"), ID: "w", Fresh: true, Prompt: "again"}); err != nil {
		t.Fatal(err)
	}
	if got := facts(t, store, "team"); len(got) != 1 {
		t.Fatalf("after a --fresh run: %+v", got)
	}
	forgetter := agentIn(t, memoryAgent, "turns:\n  - tool_calls: [{name: forget, input: {key: build}}]\n  - text: gone\n")
	if _, err := eng.Run(ctx, RunOptions{Agent: forgetter, ID: "f", Prompt: "forget it"}); err != nil {
		t.Fatal(err)
	}
	if got := facts(t, store, "team"); len(got) != 0 {
		t.Fatalf("after forget: %+v", got)
	}
}

// memoryChildEnv, when set, makes TestMemoryChild the child of
// TestMemoryWriteKilledBeforeCommit: "STORE|WORKSPACE_DIR|POINT".
const memoryChildEnv = "CAIRN_TEST_MEMORY_CHILD"

// A real process whose round remembers a fact is killed with SIGKILL
// after the call's result is durable and before the round commits: once
// before the fact is written (its temp file synced, not yet renamed) and
// once after (the namespace's directory synced). After resume the call is
// kept, not run again, and the fact is stored once, as the call made it.
// So with --strategy replay too, which replays only a round that changed
// nothing: it dropped the round, the fact stayed in the memory, and the
// model was asked again as if it had never remembered it.
func TestMemoryWriteKilledBeforeCommit(t *testing.T) {
	for _, tt := range []struct{ point, strategy string }{
		{"before-write", ""}, {"after-write", ""}, {"before-write", "replay"}, {"after-write", "replay"},
	} {
		point := tt.point
		t.Run(point+"-"+tt.strategy, func(t *testing.T) {
			af := agentIn(t, memoryAgent, rememberScript)
			store := t.TempDir()
			child := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$")
			child.Env = append(os.Environ(), memoryChildEnv+"="+store+"|"+af.Dir+"|"+point)
			out, err := child.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed at %s: %v\n%s", point, err, out)
			}
			fs, err := OpenStore(store)
			if err != nil {
				t.Fatal(err)
			}
			eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: fs})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close(context.Background())
			var report *Event
			res, err := eng.Resume(context.Background(), ResumeOptions{ID: "w", Strategy: Strategy(tt.strategy), OnEvent: func(e Event) {
				if e.Type == EventAgentResumed {
					report = &e
				}
			}})
			if err != nil || res.Status != StatusDone {
				t.Fatalf("resume: %+v, %v", res, err)
			}
			if report == nil || len(report.Finished) != 1 || report.Finished[0] != "call_1_0" || len(report.Sealed) != 0 {
				t.Fatalf("resume found %+v, want call_1_0 finished and kept", report)
			}
			got := facts(t, fs, "team")
			if len(got) != 1 || got[0].Call != "call_1_0" || got[0].Round != 1 || got[0].Text != "run make all before a release" {
				t.Fatalf("facts after resume: %+v", got)
			}
		})
	}
}

// TestMemoryChild runs the remembering agent and kills its own process at
// the point the parent names; it does nothing unless run as that child.
func TestMemoryChild(t *testing.T) {
	spec := os.Getenv(memoryChildEnv)
	if spec == "" {
		t.Skip("run by TestMemoryWriteKilledBeforeCommit")
	}
	parts := strings.SplitN(spec, "|", 3)
	storeDir, agentDir, point := parts[0], parts[1], parts[2]
	nsDir := filepath.Join(storeDir, "memory", "team")
	stop := syncpoint.Observe(func(path string) {
		before := point == "before-write" && filepath.Dir(path) == nsDir && strings.HasSuffix(path, ".tmp")
		after := point == "after-write" && path == nsDir
		if before || after {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	})
	defer stop()
	store, err := OpenStore(storeDir)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	af, err := ParseAgentFile([]byte(memoryAgent), agentDir)
	if err != nil {
		t.Fatal(err)
	}
	eng.Run(context.Background(), RunOptions{Agent: af, ID: "w", Prompt: "note the build"})
	t.Fatal("the run ended without reaching the kill point")
}
