package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
)

// agentIn writes an agent file and its script into a fresh directory with
// a workspace and parses it.
func agentIn(t testing.TB, agentYAML, scriptYAML string) *AgentFile {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(scriptYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	af, err := ParseAgentFile([]byte(agentYAML), dir)
	if err != nil {
		t.Fatal(err)
	}
	return af
}

// collect runs an agent and returns its result and every event.
func collect(t *testing.T, opts RunOptions) (*Result, []Event) {
	t.Helper()
	var events []Event
	opts.OnEvent = func(e Event) { events = append(events, e) }
	res, err := testEngine.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res, events
}

func toolEnds(events []Event) []*Call {
	var out []*Call
	for _, e := range events {
		if e.Type == EventToolEnd {
			out = append(out, e.Call)
		}
	}
	return out
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The example agent of the README runs to the end: built-in tools and an
// example tool, a report written into the workspace, a final answer.
func TestExampleAgentRuns(t *testing.T) {
	af, err := LoadAgentFile("../examples/hello/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	copyDir(t, af.WorkspaceDir(), ws)
	os.Remove(filepath.Join(ws, "REPORT.md"))

	res, events := collect(t, RunOptions{Agent: af, Workspace: ws, Prompt: af.Prompt})
	if res.Status != StatusDone {
		t.Fatalf("status %s (%s), want done", res.Status, res.Reason)
	}
	if events[0].Type != EventRunStart || events[len(events)-1].Type != EventRunEnd {
		t.Fatalf("events run from %s to %s, want run_start to run_end", events[0].Type, events[len(events)-1].Type)
	}
	seen := map[string]Outcome{}
	for _, c := range toolEnds(events) {
		seen[c.Tool] = c.Outcome
		if c.Outcome != OutcomeOK {
			t.Errorf("%s failed: %s", c.Tool, c.Output)
		}
	}
	for _, want := range []string{"list_dir", "read_file", "text_stats", "grep", "write_file"} {
		if _, ok := seen[want]; !ok {
			t.Errorf("the example never called %s", want)
		}
	}
	report, err := os.ReadFile(filepath.Join(ws, "REPORT.md"))
	if err != nil || !strings.Contains(string(report), "ridge cairn") {
		t.Fatalf("REPORT.md: %q, %v", report, err)
	}
	if !strings.Contains(res.Text, "REPORT.md") || res.Rounds != 5 || res.ToolCalls != 5 {
		t.Fatalf("result %+v", res)
	}
}

const hostileAgent = `
name: hostile
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - module: hostile.wasm
    only: [echo, spin, crash, garbage, escape]
    grant: {workspace: ro}
sandbox: {timeout: 2s, memory: 64MiB}
`

// Every way a tool call can go wrong comes back to the model as an error
// result it can read, and the run goes on to the end.
func TestFailingCallsBecomeErrorResults(t *testing.T) {
	script := `
turns:
  - tool_calls:
      - {name: spin, input: {}}
      - {name: crash, input: {}}
      - {name: garbage, input: {}}
  - tool_calls:
      - {name: echo, input_json: '{"text": "hi", "n": '}
      - {name: echo, input: {text: hi, n: three}}
      - {name: echo, input: {text: hi}}
      - {name: nosuch, input: {}}
      - {name: echo, input: {text: hi, n: 2}}
  - text: done
`
	af := agentIn(t, hostileAgent, script)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	res, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("status %s (%s), want done", res.Status, res.Reason)
	}
	want := map[string]string{
		"call_1_0": "time limit",
		"call_1_1": "exit",
		"call_1_2": "response",
		"call_2_0": "not valid JSON",
		"call_2_1": "/n",
		"call_2_2": "n",
		"call_2_3": `no tool "nosuch"`,
	}
	got := map[string]*Call{}
	for _, c := range toolEnds(events) {
		got[c.ID] = c
	}
	for id, msg := range want {
		c := got[id]
		if c == nil {
			t.Errorf("%s: no tool_end", id)
			continue
		}
		if c.Outcome != OutcomeError || !strings.Contains(c.Output, msg) {
			t.Errorf("%s (%s): outcome %s, output %q; want an error saying %q", id, c.Tool, c.Outcome, c.Output, msg)
		}
	}
	if c := got["call_2_4"]; c == nil || c.Outcome != OutcomeOK || c.Output != "hi x2" {
		t.Errorf("the well-formed call after the failures: %+v", c)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A module whose manifest reads but whose code is not valid wasm does not
// stop the run: the user is warned at the start and the model gets an
// error result for each call of its tools.
func TestBrokenModuleGivesErrorResults(t *testing.T) {
	good, err := os.ReadFile(hostileWasm)
	if err != nil {
		t.Fatal(err)
	}
	m, err := abi.ReadManifest(good)
	if err != nil {
		t.Fatal(err)
	}
	// A type section whose one entry is not a function type.
	code := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00, 0x01, 0x03, 0x01, 0x42, 0x00}
	broken, err := abi.WithManifest(code, m)
	if err != nil {
		t.Fatal(err)
	}
	af := agentIn(t, hostileAgent, "turns:\n  - tool_calls: [{name: echo, input: {text: a, n: 1}}]\n  - text: ok\n")
	if err := os.WriteFile(filepath.Join(af.Dir, "hostile.wasm"), broken, 0o644); err != nil {
		t.Fatal(err)
	}
	res, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	if res.Status != StatusDone {
		t.Fatalf("status %s (%s)", res.Status, res.Reason)
	}
	var warned bool
	for _, e := range events {
		warned = warned || (e.Type == EventWarning && strings.Contains(e.Text, "does not load"))
	}
	ends := toolEnds(events)
	if !warned || len(ends) != 1 || ends[0].Outcome != OutcomeError || !strings.Contains(ends[0].Output, "does not load") {
		t.Fatalf("warned %v, tool ends %+v", warned, ends)
	}
}

// Bytes that are not wasm at all cannot describe their tools: the run does
// not start, and the error names the module.
func TestNotWasmRefusedAtStart(t *testing.T) {
	af := agentIn(t, hostileAgent, "turns: []\n")
	if err := os.WriteFile(filepath.Join(af.Dir, "hostile.wasm"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if err == nil || !strings.Contains(err.Error(), "hostile.wasm") || !errors.Is(err, abi.ErrNotWasm) {
		t.Fatalf("got %v, want ErrNotWasm naming hostile.wasm", err)
	}
}

// A tool that asks for more than the agent file grants is refused, and the
// error says what to grant.
func TestGrantRefusedAtStart(t *testing.T) {
	yaml := strings.Replace(hostileAgent, "grant: {workspace: ro}", "grant: {}", 1)
	af := agentIn(t, yaml, "turns: []\n")
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if !errors.Is(err, ErrGrant) || !strings.Contains(err.Error(), "workspace: ro") {
		t.Fatalf("got %v, want ErrGrant saying workspace: ro", err)
	}
}

// The agent file's mistakes are found when it is read, each naming what
// is wrong: an unknown provider was once found only when the run opened
// its model, after the agent file had been taken.
func TestAgentFileMistakes(t *testing.T) {
	for src, want := range map[string]string{
		"model: {provider: script}\ntools: [{module: builtin}]\n":                                    "name is missing",
		"name: a\ntools: [{module: builtin}]\n":                                                      "model.provider is missing",
		"name: a\nmodel: {provider: ollama}\ntools: [{module: builtin}]\n":                           `model.provider "ollama": want script, openai, anthropic`,
		"name: a\nmodel: {provider: script}\n":                                                       "tools is empty",
		"name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\nlimits: {max_rounds: -1}\n": "cannot be negative",
		// Regression: two servers of one name were taken, and the messages
		// that name a server could not tell them apart.
		"name: a\nmodel: {provider: script}\nmcp: [{name: s, command: [x]}, {name: s, url: 'http://h/'}]\n": `mcp[1]: name "s" is mcp[0]'s already`,
	} {
		if _, err := ParseAgentFile([]byte(src), t.TempDir()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", src, err, want)
		}
	}
}
