package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stallingModel is an OpenAI-compatible model that asks for list_dir in
// every turn, and holds its answer to request number stallAt until release
// is closed.
type stallingModel struct {
	*httptest.Server
	requests atomic.Int32
	stalled  chan struct{} // closed when request stallAt arrives
	release  chan struct{}
}

func newStallingModel(t *testing.T, stallAt int32) *stallingModel {
	m := &stallingModel{stalled: make(chan struct{}), release: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := m.requests.Add(1)
		if n == stallAt {
			close(m.stalled)
			<-m.release
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", fmt.Sprintf(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"list_dir","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, n))
	}))
	t.Cleanup(func() {
		select {
		case <-m.release:
		default:
			close(m.release)
		}
		m.Close()
	})
	return m
}

// Regression: with the lock file removed (or replaced) while a run held
// it, a second `cairn resume` locked a new file and ran the same agent at
// the same time, committing rounds twice. Real processes: the second is
// refused as locked (exit 5) and touches nothing; the first stops at its
// next write with exit 5 and an error naming the lock file; the agent then
// resumes with every round committed once.
func TestLockFileLostMidRunNeverTwoWriters(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	cache := cacheForTests(t)
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			m := newStallingModel(t, 3)
			dir := t.TempDir()
			must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
			agent := filepath.Join(dir, "agent.yaml")
			must(t, os.WriteFile(agent, []byte(fmt.Sprintf(`name: lk
model: {provider: openai, name: m, base_url: %s/v1, max_retries: -1}
prompt: look around
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_rounds: 5}
`, m.URL)), 0o644))
			store := filepath.Join(dir, "store")
			first := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "lk", "-f", agent)
			var firstOut, firstErr bytes.Buffer
			first.Stdout, first.Stderr = &firstOut, &firstErr
			must(t, first.Start())
			select {
			case <-m.stalled: // rounds 1 and 2 are committed; the run waits for the model
			case <-time.After(time.Minute):
				first.Process.Kill()
				t.Fatalf("the run never reached its third model request\n%s", firstErr.String())
			}
			lock := filepath.Join(store, "agents", "lk", "lock")
			if how == "removed" {
				must(t, os.Remove(lock))
			} else {
				must(t, os.WriteFile(lock+".new", []byte(`{"pid":1}`), 0o600))
				must(t, os.Rename(lock+".new", lock))
			}
			journal := filepath.Join(store, "agents", "lk")
			before := dirBytes(t, journal)

			second := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "lk")
			out, _ := second.CombinedOutput()
			if code := second.ProcessState.ExitCode(); code != exitLocked {
				t.Fatalf("second writer: exit %d, want %d (locked)\n%s", code, exitLocked, out)
			}
			if !strings.Contains(string(out), "stop it at its next round with `cairn pause lk`") {
				t.Fatalf("the second writer's refusal does not say how to stop the first:\n%s", out)
			}
			if n := m.requests.Load(); n != 3 {
				t.Fatalf("the model had %d requests, want 3: the second writer ran", n)
			}
			if after := dirBytes(t, journal); after != before {
				t.Fatal("the second writer changed the agent's files")
			}

			close(m.release)
			first.Wait()
			if code := first.ProcessState.ExitCode(); code != exitLocked || !strings.Contains(firstErr.String(), "lock file") {
				t.Fatalf("first writer: exit %d, want %d with an error naming the lock file\n%s", code, exitLocked, firstErr.String())
			}

			t.Logf("the first writer said: %s", firstErr.String())
			third := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "lk")
			out, _ = third.Output()
			if code := third.ProcessState.ExitCode(); code != exitPaused {
				t.Fatalf("resume after the first let go: exit %d, want %d\n%s", code, exitPaused, out)
			}
			committed := map[int]int{}
			for _, e := range events(append(firstOut.Bytes(), out...)) {
				if e.Type == "checkpoint_saved" {
					committed[e.Round]++
				}
			}
			for r := 1; r <= 5; r++ {
				if committed[r] != 1 {
					t.Fatalf("round %d committed %d times (%v), want once", r, committed[r], committed)
				}
			}
		})
	}
}

// dirBytes is every file of dir but its lock file, in one string.
func dirBytes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	must(t, filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || filepath.Base(path) == "lock" {
			return err
		}
		data, err := os.ReadFile(path)
		fmt.Fprintf(&b, "%s %d %x\n", path, len(data), data)
		return err
	}))
	return b.String()
}
