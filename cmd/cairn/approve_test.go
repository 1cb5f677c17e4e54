package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// hostileModule builds the host package's hostile test tool (its `spin`
// loops until its deadline) and packs its manifest with cairn tools pack.
func hostileModule(t *testing.T, bin, dir string) string {
	return packedModule(t, bin, dir, "github.com/cairnrun/cairn/host/testdata/hostile")
}

// packedModule builds the Go tool pkg for wasip1 and packs its manifest
// with cairn tools pack into dir, named for the package's last element.
// It packs once per test binary; each dir gets a copy of its own.
func packedModule(t *testing.T, bin, dir, pkg string) string {
	t.Helper()
	raw := filepath.Join(dir, path.Base(pkg)+".raw.wasm")
	buildWasi(t, pkg, raw)
	src := madeOnce(t, "pack "+pkg, func(packed string) error {
		if out, err := exec.Command(bin, "tools", "pack", "-o", packed, raw).CombinedOutput(); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	})
	b, err := os.ReadFile(src)
	must(t, err)
	packed := filepath.Join(dir, path.Base(pkg)+".wasm")
	must(t, os.WriteFile(packed, b, 0o644))
	return packed
}

// approvalAgent writes, in a new directory, an agent whose script asks in
// one round for write_file, which awaits approval, and for the hostile
// module's spin, which runs until the sandbox's timeout; and a third turn
// that ends it. It returns the binary, the agent's workspace and its
// agent file.
func approvalAgent(t *testing.T, timeout string) (bin, ws, agent string) {
	t.Helper()
	bin = cairnBinary(t)
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	ws = filepath.Join(dir, "workspace")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`
turns:
  - tool_calls:
      - {name: write_file, input: {path: out.txt, content: approved}}
      - {name: spin, input: {}}
  - text: finished
`), 0o644))
	agent = filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: ask
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file]}
  - {module: hostile.wasm, only: [spin], grant: {workspace: ro}}
sandbox: {timeout: `+timeout+`}
approvals: [{tool: write_file, action: ask}]
`), 0o644))
	return bin, ws, agent
}

// An approval request survives kill -9: a real cairn process asks for
// approval of one call and is killed while another call of the round
// runs. Resume seals the running call, keeps the request, and pauses
// awaiting approval; cairn approve and another resume run the call.
func TestApprovalSurvivesKillDashNine(t *testing.T) {
	t.Parallel()
	bin, ws, agent := approvalAgent(t, "60s")
	store, cache := t.TempDir(), cacheForTests(t)

	run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "victim", "-f", agent)
	stdout, err := run.StdoutPipe()
	must(t, err)
	must(t, run.Start())
	asked := false
	for lines := bufio.NewScanner(stdout); lines.Scan(); {
		var e jsonEvent
		json.Unmarshal(lines.Bytes(), &e)
		if e.Type == "approval_required" && e.Call.ID == "call_1_0" {
			asked = true
		}
		if e.Type == "tool_start" && e.Call.ID == "call_1_1" {
			break // spin runs; the request for call_1_0 is in the journal
		}
	}
	run.Process.Signal(syscall.SIGKILL)
	run.Wait()
	if !asked {
		t.Fatal("the run never asked for approval of call_1_0")
	}

	resume := exec.Command(bin, "resume", "--store", store, "--cache", cache, "--json", "victim")
	out, _ := resume.Output()
	if code := resume.ProcessState.ExitCode(); code != exitApproval {
		t.Fatalf("resume: exit %d, want %d (awaiting approval)\n%s", code, exitApproval, out)
	}
	var resumed *jsonEvent
	for _, e := range events(out) {
		if e.Type == "agent_resumed" {
			resumed = &e
		}
	}
	if resumed == nil || len(resumed.Sealed) != 1 || resumed.Sealed[0].Call != "call_1_1" ||
		len(resumed.Awaiting) != 1 || resumed.Awaiting[0] != "call_1_0" {
		t.Fatalf("resume found %+v; want call_1_1 sealed and call_1_0 awaiting\n%s", resumed, out)
	}
	if ls, err := exec.Command(bin, "ls", "--store", store).Output(); err != nil || !strings.Contains(string(ls), "awaiting_approval") {
		t.Fatalf("ls: %v\n%s", err, ls)
	}

	if out, err := exec.Command(bin, "approve", "--store", store, "--cache", cache, "victim", "call_1_0").CombinedOutput(); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "resume", "--store", store, "--cache", cache, "victim").CombinedOutput(); err != nil {
		t.Fatalf("resume after approval: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "approved" {
		t.Fatalf("out.txt = %q, want the approved call's write", b)
	}
}

// Without a terminal a run pauses awaiting approval (exit 4); deny records
// a reason the model reads on resume; --auto-deny never pauses.
func TestApproveDenyAndAutoDenyCommands(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.yaml")
	b, err := os.ReadFile("../../examples/hello/agent.yaml")
	must(t, err)
	b = []byte(strings.ReplaceAll(string(b), "script: script.yaml", "script: "+filepath.Join(mustAbs(t, "../../examples/hello"), "script.yaml")))
	b = []byte(strings.ReplaceAll(string(b), "../tools/", mustAbs(t, "../../examples/tools")+"/"))
	b = append(b, "approvals: [{tool: write_file, action: ask}]\n"...)
	must(t, os.WriteFile(agent, b, 0o644))
	args[1] = agent

	code, _, errOut := cairn(t, append([]string{"run", "--id", "d"}, args...)...)
	if code != exitApproval || !strings.Contains(errOut, "cairn approve d call_4_0") {
		t.Fatalf("run: exit %d %s; want %d and how to decide", code, errOut, exitApproval)
	}
	code, _, errOut = cairn(t, "approve", "--store", store, "d", "call_9_9")
	if code != exitUsage || !strings.Contains(errOut, "call_4_0 (write_file)") {
		t.Fatalf("approve of a call that does not wait: exit %d %s", code, errOut)
	}
	if code, out, errOut := cairn(t, "deny", "--store", store, "--reason", "no reports today", "d", "call_4_0"); code != exitDone {
		t.Fatalf("deny: exit %d %s %s", code, out, errOut)
	}
	if code, _, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "d"); code != exitDone {
		t.Fatalf("resume: exit %d %s", code, errOut)
	}
	_, out, _ := cairn(t, "log", "--store", store, "d")
	if !strings.Contains(out, "✗ call_4_0 write_file: The call call_4_0 of write_file was denied: no reports today") {
		t.Fatalf("the model did not read the denial:\n%s", out)
	}

	if code, _, errOut := cairn(t, append([]string{"run", "--id", "u", "--auto-deny"}, args...)...); code != exitDone {
		t.Fatalf("run --auto-deny: exit %d %s", code, errOut)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	must(t, err)
	return a
}

// A run paused by a limit exits 3 and says which flag raises it; resume
// without the flag pauses again, with it finishes.
func TestResumeRaisesALimit(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	b, err := os.ReadFile("../../examples/hello/agent.yaml")
	must(t, err)
	text := strings.ReplaceAll(string(b), "max_rounds: 10", "max_rounds: 2")
	text = strings.ReplaceAll(text, "script: script.yaml", "script: "+filepath.Join(mustAbs(t, "../../examples/hello"), "script.yaml"))
	text = strings.ReplaceAll(text, "../tools/", mustAbs(t, "../../examples/tools")+"/")
	args[1] = filepath.Join(t.TempDir(), "agent.yaml")
	must(t, os.WriteFile(args[1], []byte(text), 0o644))
	code, _, errOut := cairn(t, append([]string{"run", "--id", "lim"}, args...)...)
	if code != exitPaused || !strings.Contains(errOut, "--max-rounds") {
		t.Fatalf("run: exit %d %s; want %d naming --max-rounds", code, errOut, exitPaused)
	}
	if code, _, _ := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "lim"); code != exitPaused {
		t.Fatalf("resume without raising: exit %d, want %d", code, exitPaused)
	}
	code, out, errOut := cairn(t, "resume", "--store", store, "--cache", cacheForTests(t), "--max-rounds", "10", "lim")
	if code != exitDone || !strings.Contains(out, "done after 5 rounds") {
		t.Fatalf("resume --max-rounds 10: exit %d %s\n%s", code, errOut, out)
	}
}

func TestPromptApprover(t *testing.T) {
	in := strings.NewReader("y\n\nno\nnot in my workspace\n")
	var out strings.Builder
	ask := promptApprover(newLineReader(in), &out)
	req := host.ApprovalRequest{Call: host.Call{ID: "call_1_0", Tool: "write_file", Input: `{"path":"a"}`}}
	want := []host.Decision{{Approved: true}, {}, {}, {Reason: "not in my workspace"}}
	for i, w := range want {
		d, err := ask(context.Background(), req)
		if err != nil || d != w {
			t.Errorf("answer %d: %+v, %v; want %+v", i, d, err, w)
		}
	}
	if !strings.Contains(out.String(), `approve call_1_0 write_file {"path":"a"}? [y/N, or why not]`) {
		t.Errorf("prompt: %q", out.String())
	}
	if terminalApprover(strings.NewReader("y\n"), &out) != nil {
		t.Error("a reader that is not a terminal got an approver")
	}
}
