package web

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/guestbuild"
)

// spinModule builds host/testdata/hostile, whose spin tool loops until
// its call is stopped, and packs its manifest into it.
func spinModule(t *testing.T, eng *host.Engine, dir string) string {
	t.Helper()
	out, err := guestbuild.Build(dir, "../testdata/hostile",
		func(w []byte) ([]byte, error) { return eng.Pack(context.Background(), w, nil) })
	must(t, err)
	return out
}

// spinning resumes, on a run the server holds, the agent spin, whose call
// would loop for ten minutes, and returns once that call has started.
func (f *fixture) spinning() {
	t := f.t.(*testing.T)
	t.Helper()
	dir := filepath.Join(f.agents, "spin")
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	spinModule(t, f.eng, dir)
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns:\n  - tool_calls: [{name: spin, input: {}}]\n  - text: done\n"), 0o644))
	af, err := host.ParseAgentFile([]byte(`
name: spin
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [spin], grant: {workspace: ro}}]
sandbox: {timeout: 10m}
approvals: [{tool: spin, action: ask}]
`), dir)
	must(t, err)
	res, err := f.eng.Run(context.Background(), host.RunOptions{Agent: af, ID: "spin", Prompt: "go"})
	if err != nil || res.Status != host.StatusAwaitingApproval {
		t.Fatalf("run: %+v, %v", res, err)
	}
	f.decode(f.post("/api/agents/spin/approvals/call_1_0/approve", struct{}{}), http.StatusOK, nil)
	before := f.history("spin")
	f.decode(f.post("/api/agents/spin/resume", struct{}{}), http.StatusAccepted, nil)
	resp := f.do("/api/agents/spin/events?follow=1&after="+lineCount(before), nil, "")
	buf := make([]byte, 0, 4096)
	for !bytes.Contains(buf, []byte(`"tool_start"`)) {
		chunk := make([]byte, 1024)
		n, err := resp.Body.Read(chunk)
		if err != nil {
			t.Fatalf("the stream ended before the spin call started: %v\n%s", err, buf)
		}
		buf = append(buf, chunk[:n]...)
	}
}

// Pause stops a run the server holds at its boundary, whatever call is
// in flight: here one that would loop for ten minutes. The agent is then
// paused, and the run history says so.
func TestPauseStopsAHeldRun(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.spinning()
	var v agentView
	f.getJSON("/api/agents/spin", &v)
	if v.Status != "running" || !v.Held {
		t.Fatalf("while the server runs it: %+v", v)
	}
	f.decode(f.post("/api/agents/spin/pause", struct{}{}), http.StatusAccepted, nil)
	f.srv.wg.Wait()
	// Its run ended paused, with the call that was in flight among its
	// interrupted calls, for resume to seal; the agent is listed paused, as
	// `cairn ls` lists it: interrupted is an agent whose run never ended.
	var after agentView
	f.getJSON("/api/agents/spin", &after)
	if after.Status != "paused" || after.Held || len(after.Interrupted) != 1 || !strings.HasPrefix(after.Reason, "interrupted: ") {
		t.Fatalf("after pause: %+v", after)
	}
	var runs []host.RunView
	f.getJSON("/api/agents/spin/runs", &runs)
	if last := runs[len(runs)-1]; last.Status != "paused" {
		t.Fatalf("the paused run: %+v", last)
	}
	f.decode(f.post("/api/agents/spin/pause", struct{}{}), http.StatusConflict, nil)
}

// Pause of a run this server does not hold — here a run of another
// engine on the same store, as another process's would be — asks it to
// stop at its next boundary through the store: 202, and the run ends
// paused on request after the round it was taking. Once nothing runs the
// agent, pause is 409.
func TestPauseAsksARunOfAnotherProcess(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	other, err := host.OpenStore(f.store.(*checkpoint.FileStore).Dir())
	must(t, err)
	eng, err := host.NewEngine(context.Background(), host.Config{CacheDir: testCache, Store: other})
	must(t, err)
	defer eng.Close(context.Background())
	dir := filepath.Join(f.agents, "steps")
	must(t, os.MkdirAll(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`
turns:
  - tool_calls: [{name: write_file, input: {path: a.txt, content: one}}]
  - tool_calls: [{name: write_file, input: {path: b.txt, content: two}}]
  - text: done
`), 0o644))
	af, err := host.ParseAgentFile([]byte("name: steps\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n"), dir)
	must(t, err)
	var answer map[string]any
	res, err := eng.Run(context.Background(), host.RunOptions{Agent: af, ID: "steps", Prompt: "go", OnEvent: func(e host.Event) {
		if e.Type == host.EventToolStart && e.Round == 1 {
			f.decode(f.post("/api/agents/steps/pause", struct{}{}), http.StatusAccepted, &answer)
		}
	}})
	must(t, err)
	if answer["status"] != "pause requested" {
		t.Fatalf("pause answered %v", answer)
	}
	if res.Status != host.StatusPaused || res.Reason != "paused on request" || res.Rounds != 1 {
		t.Fatalf("the run: %+v", res)
	}
	f.decode(f.post("/api/agents/steps/pause", struct{}{}), http.StatusConflict, nil)
}
