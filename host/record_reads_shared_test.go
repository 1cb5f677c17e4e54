package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/filepool"
)

// Regression: with record: reads, a call's recording kept the content of
// each file it read as the workspace held it when the call ended, not as
// the call read it. An agent sharing the workspace (a sibling sub-agent,
// a workflow's parallel step) that changed the file in between made the
// recording keep its content as what the call read, so `cairn verify` ran
// the call on what it never saw; and the file pool took that content for
// what the agent had seen, so the agent was never told of the change.
// A file read whole is now recorded as the call read it.
func TestRecordReadsKeepsWhatTheCallReadThoughASiblingChangedIt(t *testing.T) {
	eng, store := fileEngine(t)
	reader := agentIn(t, `
name: reader
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [echo, readwait], grant: {workspace: ro}}]
record: reads
sandbox: {timeout: 10s}
`, `
turns:
  - tool_calls: [{name: echo, input: {text: ready, n: 1}}]
  - tool_calls: [{name: readwait, input: {path: notes.txt}}]
  - text: read
`)
	copyFile(t, hostileWasm, filepath.Join(reader.Dir, "hostile.wasm"))
	writer := siblingWriter(t, false)
	ws := reader.WorkspaceDir()
	first := []byte("the first\n")
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), first, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := runBesideWriter(t, eng, RunOptions{Agent: reader, ID: "reader", Prompt: "read"}, "readwait", writer)
	if err != nil || res.Status != StatusDone || res.Text != "read" {
		t.Fatalf("reader: %+v, %v", res, err)
	}
	rec, err := store.Read("reader")
	if err != nil {
		t.Fatal(err)
	}
	read := filepool.HashBytes(first)
	var seen *conversation.SeenFile
	for _, m := range rec.State.Messages {
		if m.Role == conversation.RoleTool && m.Recording != nil {
			for i, f := range m.Recording.Files {
				if f.Path == "notes.txt" {
					seen = &m.Recording.Files[i]
					if m.Text != string(first) {
						t.Fatalf("the call read %q", m.Text)
					}
				}
			}
		}
	}
	if seen == nil || seen.Digest != contentDigest(read) {
		t.Errorf("the recording of what the call read: %+v, want the digest of %q", seen, first)
	}
	for _, f := range rec.State.Files {
		if f.Path == "notes.txt" && f.Hash != [32]byte(read.Hash) && !f.Outside {
			t.Errorf("the agent's file pool has notes.txt as the second version, which the agent never saw nor was told of: %+v", f)
		}
	}

}
