package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Regression: `cairn run` of an agent with max_time: 1s whose model server
// took the first request and never answered ran for as long as the server
// held it. It exits paused (3), saying max_time ended it and to resume
// with --max-time; `cairn resume AGENT --max-time 1h` goes on and
// finishes.
func TestRunWhoseModelHangsStopsAtMaxTime(t *testing.T) {
	var hang atomic.Bool
	hang.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		if hang.Load() {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`name: hung
model: {provider: openai, name: fake, base_url: `+srv.URL+`/v1, max_retries: -1}
prompt: look around
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_time: 1s}
`), 0o644))
	t.Setenv("OPENAI_API_KEY", "")
	store := t.TempDir()
	code, _, errOut := cairn(t, "run", "-f", agent, "--id", "hung", "--store", store, "--cache", cacheForTests(t))
	if code != exitPaused || !strings.Contains(errOut, "reached max_time (1s in this run)") || !strings.Contains(errOut, "--max-time") {
		t.Fatalf("run: exit %d, stderr %s; want paused (3) by max_time, saying to resume with --max-time", code, errOut)
	}
	hang.Store(false)
	code, out, errOut := cairn(t, "resume", "hung", "--max-time", "1h", "--store", store, "--cache", cacheForTests(t))
	if code != exitDone || (!strings.Contains(out, "done after 1 round") || strings.Contains(out, "after 1 rounds")) {
		t.Fatalf("resume with --max-time 1h: exit %d %s\n%s", code, errOut, out)
	}
}
