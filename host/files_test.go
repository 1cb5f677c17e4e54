package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/filepool"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

const poolAgent = `
name: pool
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`

const poolScript = `
turns:
  - tool_calls: [{name: write_file, input: {path: notes.txt, content: mine}}]
  - tool_calls: [{name: list_dir, input: {}}]
  - tool_calls: [{name: list_dir, input: {}}]
  - tool_calls: [{name: list_dir, input: {}}]
  - text: done
  - text: again
`

// A file the agent wrote and someone else changed while the agent was
// stopped is reported when it comes back, to the model (a note that does
// not start a new task) and in an event; the pool is in the state.
func TestOutsideChangeWhileStopped(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, poolAgent, poolScript)
	if res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "p", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	rec, _ := store.Read("p")
	if len(rec.State.Files) != 1 || rec.State.Files[0].Path != "notes.txt" || rec.State.Files[0].Call != "call_1_0" {
		t.Fatalf("file pool in the state: %+v", rec.State.Files)
	}
	if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), "notes.txt"), []byte("theirs, longer"), 0o644); err != nil {
		t.Fatal(err)
	}
	var told string
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "p", Prompt: "again", OnEvent: func(e Event) {
		if e.Type == EventFilesChanged {
			told = e.Text
		}
	}})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("second run: %+v, %v", res, err)
	}
	if !strings.Contains(told, "while it was stopped") || !strings.Contains(told, "notes.txt") {
		t.Fatalf("files_changed said %q", told)
	}
	rec, _ = store.Read("p")
	var note *conversation.Message
	for i, m := range rec.State.Messages {
		if m.Note {
			note = &rec.State.Messages[i]
		}
	}
	if note == nil || !strings.Contains(note.Text, "notes.txt") {
		t.Fatal("the model was not told in the conversation")
	}
	if f := rec.State.Files[0]; !f.Outside || f.Size != int64(len("theirs, longer")) {
		t.Fatalf("the pool did not take the outside version: %+v", f)
	}
}

// A file changed outside while the agent runs is reported before one of
// its later turns.
func TestOutsideChangeWhileRunning(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, poolAgent, poolScript)
	var told string
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "p", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventRoundEnd && e.Round == 1 {
			os.WriteFile(filepath.Join(af.WorkspaceDir(), "notes.txt"), []byte("edited"), 0o644)
			// The watch hears of it asynchronously (watching is best
			// effort): give its goroutine time before the next turn,
			// which a busy machine may otherwise not, as rounds take a
			// fraction of a millisecond.
			time.Sleep(100 * time.Millisecond)
		}
		if e.Type == EventFilesChanged {
			told = e.Text
		}
	}})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	if !strings.Contains(told, "since its last turn") || !strings.Contains(told, "notes.txt") {
		t.Fatalf("files_changed said %q", told)
	}
}

// A change to a file whose workspace content is not what the agent last
// saw there is refused as a conflict, saying when the agent saw it.
func TestStaleBaseIsAConflict(t *testing.T) {
	ws := t.TempDir()
	pool, err := filepool.New(ws, filepool.State{}, filepool.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	seen := filepool.HashBytes([]byte("what the agent wrote"))
	pool.Record(filepool.Entry{Path: "a.txt", Exists: true, Hash: seen.Hash, Size: seen.Size, Round: 3, Call: "call_3_0", Op: filepool.OpWrite})
	r := &run{workspace: ws, pool: pool}
	outside := overlay.Version{Exists: true, Hash: [32]byte(filepool.HashBytes([]byte("theirs")).Hash), Size: 6}
	if why := r.staleBase(overlay.Effect{Path: "a.txt", Op: overlay.OpWrite, Base: outside}); !strings.Contains(why, "since round 3") {
		t.Fatalf("stale base: %q", why)
	}
	current := overlay.Version{Exists: true, Hash: [32]byte(seen.Hash), Size: seen.Size}
	if why := r.staleBase(overlay.Effect{Path: "a.txt", Op: overlay.OpWrite, Base: current}); why != "" {
		t.Fatalf("a base the agent saw is stale: %q", why)
	}
	if why := r.staleBase(overlay.Effect{Path: "new.txt", Op: overlay.OpWrite}); why != "" {
		t.Fatalf("a file the agent never saw is stale: %q", why)
	}
}

// A file the agent read, then edited outside before the agent's write to
// it ran: the write is refused and the model is told, and the outside
// edit stays. (The write waits for approval, which makes the moment of
// the outside edit certain.)
func TestWriteOverAnOutsideEditAfterARead(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, poolAgent+"approvals: [{tool: write_file, action: ask}]\n", `
turns:
  - tool_calls: [{name: read_file, input: {path: notes.md}}]
  - tool_calls: [{name: write_file, input: {path: notes.md, content: rewritten}}]
  - text: done
`)
	ws := af.WorkspaceDir()
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("as the agent read it"), 0o644)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "rw", Prompt: "go"})
	if err != nil || res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v, %v", res, err)
	}
	rec, _ := store.Read("rw")
	if len(rec.State.Files) != 1 || rec.State.Files[0].Op != "read" || rec.State.Files[0].Call != "call_1_0" {
		t.Fatalf("the read is not in the file pool: %+v", rec.State.Files)
	}
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("edited by someone else"), 0o644)
	if err := eng.Decide(t.Context(), "rw", "call_2_0", Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	if res, err = eng.Resume(context.Background(), ResumeOptions{ID: "rw"}); err != nil || res.Status != StatusDone {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	if got := readFile(t, ws, "notes.md"); got != "edited by someone else" {
		t.Fatalf("notes.md = %q: the stale write went through", got)
	}
	rec, _ = store.Read("rw")
	told := false
	for _, m := range rec.State.Messages {
		if m.CallID == "call_2_0" {
			told = m.IsError && strings.Contains(m.Text, "notes.md: it changed outside the agent since round 1")
		}
	}
	if !told {
		t.Fatal("the model was not told that its write was refused")
	}
}

// A file edited outside after a call read it, but before the call's
// round ended, is the call's version in the pool, not the edit: the edit
// is an outside change, reported at the agent's next round. (The first of
// two calls to finish sends its tool_end before the round ends; the edit
// is made then.)
func TestOutsideEditBeforeTheRoundEndsIsNotTakenForTheRead(t *testing.T) {
	eng, store := fileEngine(t)
	af := agentIn(t, poolAgent, `
turns:
  - tool_calls: [{name: read_file, input: {path: a.md}}, {name: read_file, input: {path: b.md}}]
  - text: done
`)
	for _, name := range []string{"a.md", "b.md"} {
		if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), name), []byte("as read"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edited, told := "", ""
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "p", Prompt: "go", OnEvent: func(e Event) {
		if e.Type == EventFilesChanged {
			told = e.Text
		}
		if e.Type != EventToolEnd || edited != "" {
			return
		}
		edited = map[string]string{"call_1_0": "a.md", "call_1_1": "b.md"}[e.Call.ID]
		if err := os.WriteFile(filepath.Join(af.WorkspaceDir(), edited), []byte("edited outside"), 0o644); err != nil {
			t.Error(err)
		}
	}})
	if err != nil || res.Status != StatusDone || edited == "" {
		t.Fatalf("run: %+v, %v (edited %q)", res, err, edited)
	}
	if !strings.Contains(told, edited) {
		t.Fatalf("the outside edit of %s was not reported: files_changed said %q", edited, told)
	}
	rec, _ := store.Read("p")
	asRead, edit := filepool.HashBytes([]byte("as read")), filepool.HashBytes([]byte("edited outside"))
	found := false
	for _, f := range rec.State.Files {
		if f.Path == edited {
			found = true
			if f.Hash == edit.Hash && !f.Outside || f.Hash != asRead.Hash && f.Hash != edit.Hash {
				t.Fatalf("the pool has %+v for %s: neither what the call read nor the edit it was told of", f, edited)
			}
		}
	}
	if !found {
		t.Fatalf("no pool entry for %s: %+v", edited, rec.State.Files)
	}
}
