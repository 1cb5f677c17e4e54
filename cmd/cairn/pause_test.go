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

// turnModel is an OpenAI-compatible model that asks for list_dir in its
// first three turns and answers "done" in the fourth. It holds its answer
// to request number stallAt until release is closed, so that a test can act
// while a run is between its boundaries.
func turnModel(t *testing.T, stallAt int32) (*httptest.Server, *atomic.Int32, chan struct{}, chan struct{}) {
	var requests atomic.Int32
	stalled, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n := requests.Add(1)
		if n == stallAt {
			close(stalled)
			<-release
		}
		delta := fmt.Sprintf(`{"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"list_dir","arguments":"{}"}}]}`, n)
		finish := "tool_calls"
		if n >= 4 {
			delta, finish = `{"content":"done"}`, "stop"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", delta, finish)
	}))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		srv.Close()
	})
	return srv, &requests, stalled, release
}

// releaseAfterPauseLook lets turnModel's stalled request answer once a
// run may look for a pause again: a run looks at most every 10 ms (host's
// pauseEvery), its last look was at round 1's boundary, before the
// stalled request, and a release within 10 ms of it would let round 2's
// boundary, and those of the quick rounds after it, pass without a look.
func releaseAfterPauseLook(release chan struct{}) {
	time.Sleep(20 * time.Millisecond)
	close(release)
}

// `cairn pause` in one process stops the `cairn run` of another at its
// next boundary: the run was waiting for the model in round 2, finishes
// and commits that round, and exits paused (3) "paused on request" before
// asking the model again. On a busy machine the run may look for the
// pause (every 200 ms while a model request is out) before the answer
// released just after it arrives: the request is then stopped and the run
// ends at round 1, as a pause during a hanging request ends it. Either
// way no round is lost or taken twice, and `cairn resume` finishes the
// agent.
func TestPauseFromAnotherProcess(t *testing.T) {
	bin, cache := cairnBinary(t), cacheForTests(t)
	srv, requests, stalled, release := turnModel(t, 2)
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(fmt.Sprintf(`name: pz
model: {provider: openai, name: m, base_url: %s/v1, max_retries: -1}
prompt: look around
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
`, srv.URL)), 0o644))
	store := filepath.Join(dir, "store")
	run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "pz", "-f", agent)
	var runOut, runErr bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runErr
	must(t, run.Start())
	select {
	case <-stalled: // round 1 is committed; round 2 waits for the model
	case <-time.After(time.Minute):
		run.Process.Kill()
		t.Fatalf("the run never reached its second model request\n%s", runErr.String())
	}
	out, err := exec.Command(bin, "pause", "--store", store, "--cache", cache, "pz").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "asked agent pz to pause") {
		t.Fatalf("cairn pause: %v\n%s", err, out)
	}
	releaseAfterPauseLook(release)
	waitExit(t, run, "the paused run did not end within a minute")
	if code := run.ProcessState.ExitCode(); code != exitPaused {
		t.Fatalf("run: exit %d, want %d\n%s", code, exitPaused, runErr.String())
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("the model had %d requests, want 2: the run went on past the boundary", n)
	}
	evs := events(runOut.Bytes())
	end := evs[len(evs)-1]
	if end.Type != "run_end" || end.Status != "paused" || end.Round != 2 && end.Round != 1 ||
		!strings.Contains(runOut.String(), `"reason":"paused on request"`) {
		t.Fatalf("run ended with %+v\n%s", end, runOut.String())
	}
	if _, err := os.Stat(filepath.Join(store, "agents", "pz", "pause")); !os.IsNotExist(err) {
		t.Fatalf("the obeyed request is still in the store: %v", err)
	}

	resume := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "pz")
	resumeOut, err := resume.Output()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, resumeOut)
	}
	committed := map[int]int{}
	for _, e := range events(append(runOut.Bytes(), resumeOut...)) {
		if e.Type == "checkpoint_saved" {
			committed[e.Round]++
		}
	}
	// The model's fourth answer ends the agent: in round 4, or in round 3
	// when the pause stopped its second request.
	last := 4
	if end.Round == 1 {
		last = 3
	}
	for r := 1; r <= last; r++ {
		if committed[r] != 1 {
			t.Fatalf("round %d committed %d times (%v), want once", r, committed[r], committed)
		}
	}
}

// `cairn pause` of an agent no process runs says so, exits 1 and leaves
// no request behind for a later run.
func TestPauseOfAnAgentNobodyRuns(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "hello"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	code, _, errOut := cairn(t, "pause", "--store", store, "hello")
	if code != exitFailed || !strings.Contains(errOut, "is done") || !strings.Contains(errOut, "nothing to pause") {
		t.Fatalf("pause of a done agent: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(store, "agents", "hello", "pause")); !os.IsNotExist(err) {
		t.Fatalf("a refused pause left a request: %v", err)
	}
	if code, _, _ := cairn(t, "pause", "--store", store, "nobody"); code != exitUsage {
		t.Fatalf("pause of an unknown agent: exit %d, want %d", code, exitUsage)
	}
}
