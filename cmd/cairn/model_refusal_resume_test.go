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

// A run the model's server refused (a 400: a request too long, a parameter
// the model does not take) failed with the server's message alone, which
// did not say that the agent was kept at its last round and that a resume
// asks again once the cause is fixed. It says so now, and the resume works.
func TestModelRefusalSaysResumeAsksAgain(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if refuse.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"message":"this model does not take tools"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`name: refused
model: {provider: openai, name: fake, base_url: `+srv.URL+`/v1}
prompt: look around
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
`), 0o644))
	t.Setenv("OPENAI_API_KEY", "")
	store := t.TempDir()
	code, _, errOut := cairn(t, "run", "-f", agent, "--id", "refused", "--store", store, "--cache", cacheForTests(t))
	if code != exitFailed {
		t.Errorf("run refused by the server: exit %d, want %d", code, exitFailed)
	}
	for _, want := range []string{"HTTP 400: this model does not take tools", "once that is fixed, `cairn resume refused` asks the model again", "--model PROVIDER:NAME"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	refuse.Store(false)
	code, out, errOut := cairn(t, "resume", "refused", "--store", store, "--cache", cacheForTests(t))
	if code != exitDone || (!strings.Contains(out, "done after 1 round") || strings.Contains(out, "after 1 rounds")) {
		t.Fatalf("resume once the server takes the request: exit %d %s\n%s", code, errOut, out)
	}
}
