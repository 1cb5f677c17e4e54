package web

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

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

// Pause stops a run the server holds at its boundary, whatever call is
// in flight: here one that would loop for ten minutes. The agent is then
// paused, and the run history says so.
func TestPauseStopsAHeldRun(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
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
	var v agentView
	f.getJSON("/api/agents/spin", &v)
	if v.Status != "running" || !v.Held {
		t.Fatalf("while the server runs it: %+v", v)
	}
	f.decode(f.post("/api/agents/spin/pause", struct{}{}), http.StatusAccepted, nil)
	f.srv.wg.Wait()
	// A call was in flight, so the agent is interrupted, as `cairn ls`
	// calls an agent stopped mid-round; its run ended paused.
	var after agentView
	f.getJSON("/api/agents/spin", &after)
	if after.Status != "interrupted" || after.Held || len(after.Interrupted) != 1 {
		t.Fatalf("after pause: %+v", after)
	}
	var runs []host.RunView
	f.getJSON("/api/agents/spin/runs", &runs)
	if last := runs[len(runs)-1]; last.Status != "paused" {
		t.Fatalf("the paused run: %+v", last)
	}
	f.decode(f.post("/api/agents/spin/pause", struct{}{}), http.StatusConflict, nil)
}
