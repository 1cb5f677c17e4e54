package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A real cairn process is killed with SIGKILL after it has stored a new
// agent and before it has journaled the run's start and first prompt:
// while it waits on the agent's MCP server, which it starts between the
// two (a gate that, the first time only, starts the server so that it
// never answers). The prompt, given on the command line or by the agent
// file, is kept with the agent as it is made: the resume goes on with it,
// and the model is sent what a run never killed sends, byte for byte, and
// `cairn log` shows the conversation that run has. An
// agent stored without a prompt (none was given, as with every agent an
// older cairn made) resumes as before: it has nothing to ask the model
// and says how to give it a prompt. Until the resume, a new prompt is
// refused, which would pass over the one the agent was made with.
func TestKillBeforeTheFirstPromptIsJournaledLosesNoPrompt(t *testing.T) {
	bin, cache := cairnBinary(t), cacheForTests(t)
	m := newWireModel(t)
	server := filepath.Join(t.TempDir(), "toyserver")
	placeBuilt(t, "../../host/mcp/testdata/toyserver", server)
	const prompt = "Read the notes, step by step."
	for _, c := range []struct {
		name, filePrompt string
		args             []string
	}{
		{name: "command line", args: []string{prompt}},
		{name: "agent file", filePrompt: prompt},
		{name: "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(path string, hold bool) (store string, killed bool) {
				dir := gatedAgent(t, m, path, server, c.filePrompt)
				if hold {
					must(t, os.WriteFile(filepath.Join(dir, "hold"), nil, 0o644))
				}
				store = t.TempDir()
				args := append([]string{"run", "--store", store, "--cache", cache, "--json", "--id", "victim",
					"-f", filepath.Join(dir, "agent.yaml")}, c.args...)
				cmd := exec.Command(bin, args...)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				must(t, cmd.Start())
				if !hold {
					if err := cmd.Wait(); err != nil && c.filePrompt+strings.Join(c.args, "") != "" {
						t.Fatalf("uninterrupted run: %v\n%s", err, out.Bytes())
					}
					return store, false
				}
				pid := waitForPid(t, cmd, filepath.Join(dir, "start.pid"))
				must(t, cmd.Process.Signal(syscall.SIGKILL))
				cmd.Wait()
				syscall.Kill(pid, syscall.SIGKILL)
				if bytes.Contains(out.Bytes(), []byte(`"type":"run_start"`)) {
					t.Fatalf("the run started before its MCP server answered:\n%s", out.Bytes())
				}
				return store, true
			}
			wholePath, trialPath := c.name[:4]+"-whole", c.name[:4]+"-trial"
			wholeStore, _ := run(wholePath, false)
			whole := m.sent(wholePath)
			store, _ := run(trialPath, true)
			if n := len(m.sent(trialPath)); n != 0 {
				t.Fatalf("the killed run sent the model %d requests before its MCP server answered", n)
			}
			if c.name != "none" {
				// A new prompt would pass over the one the agent was made
				// with: it is refused until a resume has given that one.
				out, err := exec.Command(bin, "run", "--store", store, "--cache", cache, "--id", "victim", "something else").CombinedOutput()
				if err == nil || !bytes.Contains(out, []byte("resume it first (`cairn resume victim`) to go on with that prompt")) {
					t.Fatalf("a new prompt before the resume: %v, want it refused with the resume's advice:\n%s", err, out)
				}
				// So is serving it over MCP, whose client's prompts would
				// start a run without the one the agent was made with.
				mcp := exec.Command(bin, "mcp", "--store", store, "--cache", cache, "--id", "victim")
				mcp.Stdin = strings.NewReader("")
				out, err = mcp.CombinedOutput()
				if err == nil || !bytes.Contains(out, []byte("resume it first (`cairn resume victim`) to go on with that prompt, then serve it")) {
					t.Fatalf("cairn mcp --id before the resume: %v, want it refused with the resume's advice:\n%s", err, out)
				}
			}
			res := exec.Command(bin, "resume", "--store", store, "--cache", cache, "victim")
			out, err := res.CombinedOutput()
			resumed := m.sent(trialPath)
			if c.name == "none" {
				if code := res.ProcessState.ExitCode(); code != exitPaused || !bytes.Contains(out, []byte("the agent has no conversation yet; give it a prompt with `cairn run --id victim PROMPT`")) {
					t.Fatalf("resume of an agent stored without a prompt: exit %d, want %d and the advice to give one:\n%s", code, exitPaused, out)
				}
				if len(resumed) != 0 {
					t.Fatalf("resume of an agent stored without a prompt sent the model %d requests", len(resumed))
				}
				return
			}
			if err != nil {
				t.Fatalf("resume: %v\n%s", err, out)
			}
			if len(whole) < 2 || len(resumed) != len(whole) {
				t.Fatalf("the resumed run sent %d requests, the run never killed %d:\n%s", len(resumed), len(whole), out)
			}
			for i := range whole {
				if !bytes.Equal(resumed[i], whole[i]) {
					t.Fatalf("request %d differs from the run never killed's:\nresumed: %s\nnever killed: %s", i+1, resumed[i], whole[i])
				}
			}
			if got, want := agentLog(t, bin, store), agentLog(t, bin, wholeStore); !bytes.Equal(got, want) {
				t.Fatalf("cairn log after the resume:\n%s\nwant, as the run never killed has it:\n%s", got, want)
			}
		})
	}
}

// gatedAgent writes, in a new directory it returns, an agent whose model
// is m under path and whose MCP server is the toy server started through
// a gate: while a file named hold is beside it, the gate removes it and
// starts the server as one that never answers (it writes its pid to
// start.pid).
func gatedAgent(t *testing.T, m *wireModel, path, server, prompt string) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "ws", "notes.txt"), []byte("a line of the notes the agent reads again\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "gate.sh"), []byte(fmt.Sprintf(
		"if [ -e hold ]; then rm hold; exec %s hang-at-start; fi\nexec %s\n", server, server)), 0o644))
	file := fmt.Sprintf(`name: gated
model: {provider: openai, name: m, base_url: %s/%s/v1, max_retries: -1}
system: You read the notes again and again.
workspace: ws
tools: [{module: builtin, only: [read_file]}]
mcp: [{name: toy, command: [sh, gate.sh]}]
limits: {max_rounds: %d}
`, m.URL, path, ctxRounds+5)
	if prompt != "" {
		file += "prompt: " + prompt + "\n"
	}
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(file), 0o644))
	return dir
}

// waitForPid waits, a minute at most, for a pid in file, written while cmd
// runs.
func waitForPid(t *testing.T, cmd *exec.Cmd, file string) int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%s was not written within a minute", file)
		}
	}
}
