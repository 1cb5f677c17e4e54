package host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Two calls of one round that write the same file: the first call's write
// reaches the workspace, the second is refused and its result says why.
// Each call saw the workspace as it was at the start of the round.
func TestConflictWithinARound(t *testing.T) {
	af := agentIn(t, `
name: conflict
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
`, `
turns:
  - tool_calls:
      - {name: write_file, input: {path: same.txt, content: first}}
      - {name: write_file, input: {path: same.txt, content: second}}
      - {name: write_file, input: {path: other.txt, content: fine}}
  - text: done
`)
	res, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	ws := af.WorkspaceDir()
	if got := readFile(t, ws, "same.txt"); got != "first" {
		t.Fatalf("same.txt = %q, want the first call's write", got)
	}
	if got := readFile(t, ws, "other.txt"); got != "fine" {
		t.Fatalf("other.txt = %q", got)
	}
	msgs := stateMessages(t, res.Agent)
	if m := msgs["call_1_1"]; !m.IsError || !strings.Contains(m.Text, "same.txt: call call_1_0 of this round changed it first") {
		t.Fatalf("the second call's result: %+v", m)
	}
	if m := msgs["call_1_0"]; m.IsError {
		t.Fatalf("the first call's result: %+v", m)
	}
	applied := 0
	for _, e := range events {
		if e.Type == EventEffectsApplied {
			applied++
		}
	}
	if applied != 2 {
		t.Fatalf("%d effects_applied events, want 2", applied)
	}
}

// A call that fails changes nothing, even what it wrote before failing.
func TestFailedCallChangesNothing(t *testing.T) {
	af := agentIn(t, `
name: fails
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [append, scribble], grant: {workspace: rw}}]
`, `
turns:
  - tool_calls: [{name: append, input: {path: log.txt, line: one}}]
  - tool_calls: [{name: append, input: {path: log.txt, line: "two"}}, {name: scribble, input: {path: half.txt}}]
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	res, _ := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	if got := readFile(t, af.WorkspaceDir(), "log.txt"); got != "one\ntwo\n" {
		t.Fatalf("log.txt = %q", got)
	}
	if got := readFile(t, af.WorkspaceDir(), "half.txt"); got != "" {
		t.Fatalf("the call that crashed changed the workspace: half.txt = %q", got)
	}
	entries, _ := os.ReadDir(testEngine.stagingRoot(res.Agent))
	if len(entries) != 0 {
		t.Fatalf("staging left behind: %v", entries)
	}
}

// toolAnswer is what the model read of a call.
type toolAnswer = struct {
	Text    string
	IsError bool
}

// stateMessages are the tool messages of an agent's state, by call.
func stateMessages(t *testing.T, agent string) map[string]toolAnswer {
	t.Helper()
	return storedMessages(t, testEngine.Store(), agent)
}

// storedMessages is stateMessages of an agent in store.
func storedMessages(t *testing.T, store checkpoint.Store, agent string) map[string]toolAnswer {
	t.Helper()
	rec, err := store.Read(agent)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]toolAnswer{}
	for _, m := range rec.State.Messages {
		if m.CallID != "" {
			out[m.CallID] = struct {
				Text    string
				IsError bool
			}{m.Text, m.IsError}
		}
	}
	return out
}

// Undo restores what a round replaced, refuses a path changed since, and
// goes back one kept round at a time.
func TestUndo(t *testing.T) {
	eng, _ := fileEngine(t)
	af := agentIn(t, poolAgent, forkScript)
	for i := 0; i < 2; i++ { // notes.txt: "one", then "two"
		if res, err := eng.Run(t.Context(), RunOptions{Agent: af, ID: "u", Prompt: "go"}); err != nil || res.Status != StatusDone {
			t.Fatalf("run: %+v, %v", res, err)
		}
	}
	ws := af.WorkspaceDir()
	u, err := eng.Undo(t.Context(), "u")
	if err != nil || u.Round != 3 || len(u.Restored) != 1 || readFile(t, ws, "notes.txt") != "one" {
		t.Fatalf("undo: %+v, %v, notes.txt %q", u, err, readFile(t, ws, "notes.txt"))
	}
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("someone else's"), 0o644)
	u, err = eng.Undo(t.Context(), "u")
	if err != nil || u.Round != 1 || len(u.Conflicts) != 1 || readFile(t, ws, "notes.txt") != "someone else's" {
		t.Fatalf("undo over an outside change: %+v, %v", u, err)
	}
}

// A call that floods the workspace with 100,000 files, going on past every
// error, fails with the staging limit it reached and changes nothing;
// the run goes on. (It once made them all, and took minutes past its
// deadline to settle them.)
func TestFileFloodIsRefusedAtTheLimit(t *testing.T) {
	af, m := runFlood(t, "flood", "{staged_paths: 1000}", 100000)
	if !m.IsError || !strings.Contains(m.Text, "staging limit reached: the call tried to change more than 1000 paths") ||
		!strings.Contains(m.Text, "none of its changes were kept (the agent file's sandbox") {
		t.Fatalf("the flood's result: %+v", m)
	}
	if entries, _ := os.ReadDir(af.WorkspaceDir()); len(entries) != 1 {
		t.Fatalf("the workspace holds %d entries after the first call made one and the flood was refused", len(entries))
	}
}

// A Go tool whose output is not UTF-8 answers its call: the model reads
// U+FFFD for each bad byte, and the call is no failure.
func TestToolOutputNotUTF8(t *testing.T) {
	af := agentIn(t, `
name: latin
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [latin1]}]
`, `
turns:
  - tool_calls: [{name: latin1, input: {}}]
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	res, _ := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	if m := stateMessages(t, res.Agent)["call_1_0"]; m.IsError || m.Text != "caf\uFFFD cr\uFFFDme" {
		t.Fatalf("the call's result: %+v", m)
	}
}

// The model reads a tool's log only when the call failed: the tail of a
// crashed call's stderr is in its result, a call that answered keeps its
// log for the user (abi's "One call" says so).
func TestStderrReachesTheModelOnlyOnFailure(t *testing.T) {
	af := agentIn(t, `
name: logs
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [crash, chatty]}]
`, `
turns:
  - tool_calls: [{name: crash, input: {}}, {name: chatty, input: {}}]
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	res, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	msgs := stateMessages(t, res.Agent)
	if m := msgs["call_1_0"]; !m.IsError || !strings.Contains(m.Text, "exited with status 7; its log ends: hostile: about to crash") {
		t.Fatalf("the crash's result: %+v", m)
	}
	if m := msgs["call_1_1"]; m.IsError || m.Text != "answered" {
		t.Fatalf("the chatty call's result: %+v", m)
	}
	for _, c := range toolEnds(events) {
		if c.ID == "call_1_1" && !strings.Contains(c.Stderr, "log line for the user only") {
			t.Fatalf("the user's event does not carry the log: %+v", c)
		}
	}
}

// A flood under limits too high to stop it stops at the call's deadline:
// the call fails with the deadline, changes nothing, and the run goes on.
func TestFileFloodStopsAtItsDeadline(t *testing.T) {
	af, m := runFlood(t, "flood", "{timeout: 1s, staged_paths: 1000000, staging: 4GiB}", 1000000)
	if !m.IsError || !strings.Contains(m.Text, "ran past its time limit") {
		t.Fatalf("the flood's result: %+v", m)
	}
	if entries, _ := os.ReadDir(af.WorkspaceDir()); len(entries) != 1 {
		t.Fatalf("the workspace holds %d entries after the first call made one and the flood ran out of time", len(entries))
	}
}

// A call that makes empty files at the bottom of a chain of long
// directory names, within the paths and bytes limits, fails with the
// staging limit once the names of its paths pass what the record of a
// call holds, and changes nothing; the run goes on. (2,200 paths of 50 KB
// each once made a result record of 211 MB, more than a journal frame
// holds, and the whole run failed.)
func TestLongNamedFloodIsRefusedAtTheLimit(t *testing.T) {
	af, m := runFlood(t, "deepflood", "{timeout: 5m}", 1200)
	if !m.IsError || !strings.Contains(m.Text, "staging limit reached: the call tried to change paths of the workspace whose names come to more than 4 MiB") ||
		!strings.Contains(m.Text, "none of its changes were kept (no setting raises this bound") {
		t.Fatalf("the flood's result: %+v", m)
	}
	if entries, _ := os.ReadDir(af.WorkspaceDir()); len(entries) != 1 {
		t.Fatalf("the workspace holds %d entries after the first call made one and the flood was refused", len(entries))
	}
}

// runFlood runs an agent whose hostile tool (flood or deepflood) makes
// one file, then n files in one call, under the sandbox settings given,
// and returns the agent file and the result the model read of the flood
// (call_2_0).
func runFlood(t *testing.T, tool, sandbox string, n int) (*AgentFile, toolAnswer) {
	t.Helper()
	af := agentIn(t, `
name: flood
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [`+tool+`], grant: {workspace: rw}}]
sandbox: `+sandbox+`
`, fmt.Sprintf(`
turns:
  - tool_calls: [{name: %s, input: {n: 1}}]
  - tool_calls: [{name: %[1]s, input: {n: %d}}]
  - text: done
`, tool, n))
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	res, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	// The first call waited for the module to compile; the second is
	// the flood.
	t.Logf("the flood's call took %.0f ms", toolEnds(events)[1].DurationMS)
	return af, stateMessages(t, res.Agent)["call_2_0"]
}

// Regression: a call refused for the bound of what it saw (it read,
// described or listed more of the workspace than is recorded of one
// call) told the model only that, not that no setting raises the bound:
// here a tool opening 12,000 names of one file through links the
// workspace holds, 24 MiB of names.
func TestManyLinkedReadsAreRefusedAtTheBound(t *testing.T) {
	af := agentIn(t, `
name: reader
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: hostile.wasm, only: [linkreads], grant: {workspace: ro}}]
sandbox: {timeout: 5m}
`, `
turns:
  - tool_calls: [{name: linkreads, input: {n: 12000}}]
  - text: done
`)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	ws := af.WorkspaceDir()
	if err := os.WriteFile(filepath.Join(ws, "f"), []byte("one file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range "abcd" {
		if err := os.Symlink(".", filepath.Join(ws, strings.Repeat(string(c), 250))); err != nil {
			t.Fatal(err)
		}
	}
	res, _ := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("%s: %s", res.Status, res.Reason)
	}
	m := stateMessages(t, res.Agent)["call_1_0"]
	if !m.IsError || !strings.Contains(m.Text, "seen limit reached: the call read") ||
		!strings.Contains(m.Text, "no setting raises this bound") {
		t.Fatalf("the call past the bound: %+v", m)
	}
}
