package workflow_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a tool step with module: fetch, the built-in fetch module an
// agent file names the same way, was refused as a module file not there
// (fetch, beside the workflow file): only builtin was taken as built in.
// The step calls the fetch tool through its grant, against a server on
// loopback, and its output is the page's text.
func TestToolStepTakesTheFetchModule(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>Tide tables</title></head><body><p>High water at <b>06:12</b>.</p></body></html>`)
	}))
	defer srv.Close()
	hostPort := strings.TrimPrefix(srv.URL, "http://")
	dir := flowDir(t, map[string]string{"ws/": "", "flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
		"  - {name: tides, tool: fetch, module: fetch, grant: {net: {allow: [\"" + hostPort + "\"]}}, input: {url: \"" + srv.URL + "/tides\"}}\n"})
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	res, err := workflow.Run(context.Background(), engine(t, checkpoint.NewMemStore()), f, workflow.Options{ID: "wf"})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Status != checkpoint.StatusDone {
		t.Fatalf("run: %s: %s", res.Status, res.Reason)
	}
	if out := outputs(res.Record)["tides"]; !strings.HasSuffix(out, "# Tide tables\n\nHigh water at 06:12.") {
		t.Errorf("step tides' output: %q; want the page's text", out)
	}
}
