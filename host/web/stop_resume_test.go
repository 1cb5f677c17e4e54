package web

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// manyRounds is a script of 40 rounds, each writing a file, and an answer.
func manyRounds() string {
	var b strings.Builder
	b.WriteString("turns:\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "  - tool_calls: [{name: write_file, input: {path: f%d.txt, content: x}}]\n", i)
	}
	b.WriteString("  - text: done\n")
	return b.String()
}

// gatedOpen is a file store whose Open, once armed, says it was called
// and waits for the gate: a resume held while it loads the agent, before
// its first event.
type gatedOpen struct {
	*checkpoint.FileStore
	armed   atomic.Bool
	once    sync.Once
	opening chan struct{}
	gate    chan struct{}
}

func (g *gatedOpen) Open(id string) (*checkpoint.Recovered, checkpoint.Log, error) {
	if g.armed.Load() {
		g.once.Do(func() { close(g.opening) })
		<-g.gate
	}
	return g.FileStore.Open(id)
}

// pausedAfterOneRound runs the 40-round agent under id and stops it at
// its first boundary, so that a resume has 39 rounds to take.
func (f *fixture) pausedAfterOneRound(id string) {
	f.t.Helper()
	dir := filepath.Join(f.agents, id)
	must(f.t.(*testing.T), os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(f.t.(*testing.T), os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(manyRounds()), 0o644))
	af, err := host.ParseAgentFile([]byte(doneAgent), dir)
	must(f.t.(*testing.T), err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := f.eng.Run(ctx, host.RunOptions{Agent: af, ID: id, Prompt: "go", OnEvent: func(e host.Event) {
		if e.Type == host.EventToolEnd {
			cancel()
		}
	}})
	if err != nil || res.Status != host.StatusPaused {
		f.t.Fatalf("run: %+v, %v", res, err)
	}
}

// closeWithin calls Server.Close and fails the test if it has not
// returned within d. Close of a server that waits for a run it never
// stopped would wait for all of that run.
func (f *fixture) closeWithin(t *testing.T, d time.Duration) {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		f.srv.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(d):
		t.Fatalf("Close has not returned %s after it was called", d)
	}
}

// stoppedEarly wants the agent stopped by Close with rounds to go, not
// run to its end: its last run ended paused, or, when Close came before
// the run had re-hashed the workspace, failed with the context's
// cancellation or its cause (Engine.Resume ends a run stopped there failed, not
// paused: a defect of host's resume, reported; resume continues either).
func (f *fixture) stoppedEarly(t *testing.T, id string) {
	t.Helper()
	in, err := host.Inspect(t.Context(), f.store, id)
	must(t, err)
	runs := in.Runs()
	last := runs[len(runs)-1]
	stopped := last.Status == "paused" || last.Status == "failed" &&
		(strings.Contains(last.Reason, "context canceled") || strings.Contains(last.Reason, errServeStopped.Error()))
	if !stopped || in.State.Round >= 40 || last.Ended.IsZero() {
		t.Fatalf("after Close: status %s at round %d, last run %+v; want it stopped before round 40",
			in.Summary.Status, in.State.Round, last)
	}
	if last.Status != "paused" {
		t.Logf("the run Close stopped ended %s: %s", last.Status, last.Reason)
	}
}

// Stopping the server right after it accepted a resume pauses that run
// at its boundary and returns promptly, at whatever point the resume
// was: loading the agent before its first event (the server once held a
// run only from its first event, so Close did not stop it and waited for
// all of it), or not yet begun when Close began (the handler then started
// a run Close never saw). A resume asked for once Close has begun is
// refused with 503 and changes nothing.
func TestStopRightAfterResumePausesTheRun(t *testing.T) {
	t.Run("loading", func(t *testing.T) {
		dir := t.TempDir()
		fs, err := checkpoint.OpenFileStore(dir)
		must(t, err)
		g := &gatedOpen{FileStore: fs, opening: make(chan struct{}), gate: make(chan struct{})}
		f := newFixtureOn(t, Config{Loopback: true}, g)
		f.pausedAfterOneRound("long")
		g.armed.Store(true)
		answered := make(chan *http.Response, 1)
		go func() { answered <- f.post("/api/agents/long/resume", struct{}{}) }()
		select {
		case <-g.opening:
		case <-time.After(30 * time.Second):
			t.Fatal("the resume did not open the agent")
		}
		go func() {
			time.Sleep(200 * time.Millisecond) // Close has begun
			close(g.gate)
		}()
		f.closeWithin(t, 30*time.Second)
		if resp := <-answered; resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("resume answered %s", resp.Status)
		}
		f.stoppedEarly(t, "long")
	})
	t.Run("accepted", func(t *testing.T) {
		f := newFixture(t, Config{Loopback: true})
		f.pausedAfterOneRound("long")
		f.decode(f.post("/api/agents/long/resume", struct{}{}), http.StatusAccepted, nil)
		f.closeWithin(t, 30*time.Second)
		f.stoppedEarly(t, "long")
	})
	t.Run("after Close began", func(t *testing.T) {
		f := newFixture(t, Config{Loopback: true})
		f.pausedAfterOneRound("long")
		f.closeWithin(t, 30*time.Second)
		var e apiError
		f.decode(f.post("/api/agents/long/resume", struct{}{}), http.StatusServiceUnavailable, &e)
		if !strings.Contains(e.Error, "stopping") {
			t.Fatalf("the refusal says %q", e.Error)
		}
		f.srv.wg.Wait()
		in, err := host.Inspect(t.Context(), f.store, "long")
		must(t, err)
		if in.State.Round != 1 || len(in.State.Runs) != 1 {
			t.Fatalf("a refused resume ran: round %d, %d runs", in.State.Round, len(in.State.Runs))
		}
	})
}
