package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/filepool"
)

// Regression: a call's recording took what a file it changed held before
// from the workspace as the call ended, not as the call found it. An
// agent sharing the workspace (a sibling sub-agent, a workflow's parallel
// step) that changed the file in between made the recording name the
// sibling's content as the call's base, and `cairn verify` reported an
// honest call as diverged: run again on that content, its change was not
// the one recorded. Verify runs of agents that shared a workspace showed
// it at once: write_file of content a sibling had just written made no
// change on replay.
func TestRecordingKeepsTheBaseTheCallChangedThoughASiblingChangedIt(t *testing.T) {
	eng, store := fileEngine(t)
	appender := agentIn(t, `
name: appender
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [echo, appendwait], grant: {workspace: rw}}]
sandbox: {timeout: 10s}
`, `
turns:
  - tool_calls: [{name: echo, input: {text: ready, n: 1}}]
  - tool_calls: [{name: appendwait, input: {path: notes.txt, line: mine, until: done.txt}}]
  - text: appended
`)
	copyFile(t, hostileWasm, filepath.Join(appender.Dir, "hostile.wasm"))
	writer := siblingWriter(t, true)
	ws := appender.WorkspaceDir()
	first := []byte("the first\n")
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), first, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := runBesideWriter(t, eng, RunOptions{Agent: appender, ID: "appender", Prompt: "append"}, "appendwait", writer)
	if err != nil || res.Status != StatusDone {
		t.Fatalf("appender: %+v, %v", res, err)
	}
	rec, err := store.Read("appender")
	if err != nil {
		t.Fatal(err)
	}
	var call *conversation.Message
	for i, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool && strings.HasPrefix(m.Text, "appended") {
			call = &rec.State.Messages[i]
		}
	}
	if call == nil || call.Recording == nil || !strings.Contains(call.Text, "notes.txt") {
		t.Fatalf("the call's result: %+v; want its change refused, the writer's change made first", call)
	}
	var base *conversation.SeenFile
	for i, f := range call.Recording.Files {
		if f.Path == "notes.txt" {
			base = &call.Recording.Files[i]
		}
	}
	if want := contentDigest(filepool.HashBytes(first)); base == nil || base.Digest != want {
		t.Errorf("the recorded base of notes.txt: %+v, want the digest of %q, as the call found it", base, first)
	}
	rep, err := eng.Verify(context.Background(), "appender", VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Calls {
		if c.Status != VerifyMatch {
			t.Errorf("verify call %s (%s): %s %v", c.Call, c.Tool, c.Status, c.Divergences)
		}
	}
}
