package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Regression: a tool step whose POST was in flight at kill -9 was failed by
// the first `cairn workflow resume` with the seal's recommendation (check
// the remote side), and the second resume made the step again from scratch:
// it sent the POST a second time and erased the step agent's record of the
// first attempt, so `cairn log` and `cairn runs` no longer showed it. A real
// cairn process is killed while the step's POST waits for its answer. Each
// plain resume fails the step saying the call may have taken effect, what
// to check and how to retry it, and sends nothing; `--retry post` makes the
// call again, once, in the same agent, whose log keeps the first attempt.
func TestWorkflowResumeDoesNotSendASealedPostAgain(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	var mu sync.Mutex
	posts := 0
	hung, unhang := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		mu.Lock()
		posts++
		first := posts == 1
		mu.Unlock()
		if first { // the first answer never comes while the process lives
			hung <- struct{}{}
			<-unhang
			return
		}
		fmt.Fprint(w, "order taken")
	}))
	t.Cleanup(func() { close(unhang); srv.Close() })
	count := func() int { mu.Lock(); defer mu.Unlock(); return posts }

	dir := flowFiles(t, map[string]string{"flow.yaml": fmt.Sprintf("name: w\nworkspace: ws\nsteps:\n"+
		"  - name: post\n    tool: http\n    module: nettool.wasm\n"+
		"    grant: {net: {allow: [%q], methods: [POST]}}\n"+
		"    input: {method: POST, url: %q, body: order-1}\n", strings.TrimPrefix(srv.URL, "http://"), srv.URL+"/order")})
	packedModule(t, bin, dir, "github.com/cairnrun/cairn/host/testdata/nettool")
	store, cache := t.TempDir(), cacheForTests(t)
	run := exec.Command(bin, "workflow", "run", "--store", store, "--cache", cache, "--id", "W", filepath.Join(dir, "flow.yaml"))
	must(t, run.Start())
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	select {
	case <-hung:
	case err := <-exited:
		t.Fatalf("the workflow ended before its POST reached the server: %v", err)
	case <-time.After(5 * time.Minute): // a guard for a hang, not a bound: a busy machine compiles slowly
		run.Process.Kill()
		t.Fatalf("the POST never reached the server: %v", <-exited)
	}
	run.Process.Kill() // SIGKILL
	<-exited

	resume := func(args ...string) (int, string) {
		out, err := exec.Command(bin, append([]string{"workflow", "resume", "--store", store, "--cache", cache}, args...)...).CombinedOutput()
		return exitCodeOf(err), string(out)
	}
	for i := range 2 {
		code, out := resume("W")
		if code != exitFailed || !strings.Contains(out, "POST "+srv.URL+"/order") || !strings.Contains(out, "check the remote side") ||
			!strings.Contains(out, "`cairn workflow resume --retry post W`") || strings.Contains(out, "fix it and") {
			t.Fatalf("resume %d: exit %d\n%s\nwant exit %d naming the POST, what to check and how to retry", i+1, code, out, exitFailed)
		}
		if n := count(); n != 1 {
			t.Fatalf("after resume %d the server saw %d POSTs, want 1", i+1, n)
		}
	}
	if code, out := resume("--retry", "nosuch", "W"); code != exitUsage || !strings.Contains(out, "nosuch is not a step") {
		t.Errorf("resume --retry of no step: exit %d\n%s", code, out)
	}
	if code, out := resume("--retry", "post", "W"); code != exitDone || !strings.Contains(out, "order taken") {
		t.Fatalf("resume --retry post: exit %d\n%s", code, out)
	}
	if n := count(); n != 2 {
		t.Fatalf("after the retry the server saw %d POSTs, want 2", n)
	}
	// The first attempt is still the agent's: its sealed call, and the runs.
	logOut, err := exec.Command(bin, "log", "--store", store, "W.post").CombinedOutput()
	if err != nil || !strings.Contains(string(logOut), "This call was interrupted") || !strings.Contains(string(logOut), "order taken") {
		t.Errorf("cairn log W.post lacks an attempt: %v\n%s", err, logOut)
	}
	runs, err := exec.Command(bin, "runs", "--store", store, "W.post").CombinedOutput()
	if err != nil || strings.Count(string(runs), "run-") < 3 {
		t.Errorf("cairn runs W.post lacks a run (the first, its resume, the retry): %v\n%s", err, runs)
	}
}
