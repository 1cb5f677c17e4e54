package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// readCountingStore is a file store that counts how often an agent's whole
// state is read back, by Read or by Open.
type readCountingStore struct {
	*checkpoint.FileStore
	reads, opens atomic.Int32
}

func (s *readCountingStore) Read(id string) (*checkpoint.Recovered, error) {
	s.reads.Add(1)
	return s.FileStore.Read(id)
}

func (s *readCountingStore) Open(id string) (*checkpoint.Recovered, checkpoint.Log, error) {
	s.opens.Add(1)
	return s.FileStore.Open(id)
}

// pausedAgent is an engine on a counting file store with agent "a" paused
// after one round of a read_file call, its script holding one more.
func pausedAgent(t *testing.T) (*Engine, *readCountingStore) {
	t.Helper()
	af := agentIn(t, `
name: a
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
limits: {max_rounds: 1}
`, `turns:
  - tool_calls: [{name: read_file, input: {path: f.txt}}]
  - tool_calls: [{name: read_file, input: {path: f.txt}}]
  - text: done
`)
	must(t, os.WriteFile(filepath.Join(af.Dir, "workspace", "f.txt"), []byte("a line\n"), 0o644))
	fs, err := checkpoint.OpenFileStore(t.TempDir())
	must(t, err)
	store := &readCountingStore{FileStore: fs}
	eng, err := NewEngine(context.Background(), Config{CacheDir: testCache, Store: store})
	must(t, err)
	t.Cleanup(func() { eng.Close(context.Background()) })
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "a", Prompt: "go"})
	if err != nil || res.Status != StatusPaused {
		t.Fatalf("run: %+v, %v", res, err)
	}
	store.reads.Store(0)
	store.opens.Store(0)
	return eng, store
}

// A resume on a file store read the whole agent twice: once before taking
// its lock, to refuse it changing nothing, and again under the lock. An
// agent of 100,000 messages took about a second of CPU for each. The
// directory's lock leaves nothing behind, so the agent is read once, under
// it.
func TestResumeOnFileStoreReadsTheAgentOnce(t *testing.T) {
	eng, store := pausedAgent(t)
	res, err := eng.Resume(context.Background(), ResumeOptions{ID: "a", Limits: RunLimits{MaxRounds: 5}})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if r, o := store.reads.Load(), store.opens.Load(); r+o != 1 {
		t.Errorf("the resume read the agent %d times (Read %d, Open %d), want once", r+o, r, o)
	}
}

// Reading the agent only under its lock must not let a refused resume
// change anything: an agent that is not there gets no directory, and a
// damaged one keeps its pause request and lock file as they were.
func TestResumeRefusedUnderTheLockChangesNothing(t *testing.T) {
	eng, store := pausedAgent(t)
	_, err := eng.Resume(context.Background(), ResumeOptions{ID: "nobody"})
	if !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("resume of an unknown agent: %v, want ErrNotFound", err)
	}
	if store.Exists("nobody") {
		t.Error("a refused resume of an unknown agent made it")
	}
	if _, err := os.Stat(filepath.Join(store.Dir(), "agents", "nobody")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused resume of an unknown agent left its directory: %v", err)
	}

	dir := filepath.Join(store.Dir(), "agents", "a")
	must(t, store.RequestPause("a"))
	snaps, err := filepath.Glob(filepath.Join(dir, "snap-*.cbor"))
	if err != nil || len(snaps) == 0 {
		t.Fatalf("no snapshot to damage: %v %v", snaps, err)
	}
	for _, snap := range snaps {
		must(t, os.WriteFile(snap, []byte("not a snapshot"), 0o600))
	}
	before := filesOf(t, dir)
	_, err = eng.Resume(context.Background(), ResumeOptions{ID: "a"})
	if err == nil {
		t.Fatal("a damaged agent was resumed")
	}
	t.Logf("refused: %v", err)
	after := filesOf(t, dir)
	if len(after) != len(before) {
		t.Errorf("files of the agent before the refused resume %v, after %v", keysOf(before), keysOf(after))
	}
	for name, data := range before {
		if got, ok := after[name]; !ok || got != data {
			t.Errorf("%s changed or went with the refused resume", name)
		}
	}
	if asked, err := store.PauseRequested("a"); err != nil || !asked {
		t.Errorf("the pause request after the refused resume: %v, %v; want it kept", asked, err)
	}
}

// filesOf is every regular file of dir by name, with its content.
func filesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must(t, err)
	out := map[string]string{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		must(t, err)
		out[e.Name()] = string(data)
	}
	return out
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
