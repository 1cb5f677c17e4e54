package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// effectsAgent is an agent whose every round appends a line to a file and
// writes another: after any crash and a resume (replay) its workspace must
// equal that of a run that never crashed, every line appended exactly
// once — but for the calls resume sealed (in flight in a round that
// replay kept because a finished call of it had changed the workspace),
// whose changes must be nowhere.
func effectsAgent(t *testing.T, bin string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	hostileModule(t, bin, dir)
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&script, "  - tool_calls: [{name: append, input: {path: log.txt, line: line %d}}, {name: write_file, input: {path: copy-%d.txt, content: \"%d\"}}]\n", i, i, i)
	}
	script.WriteString("  - text: finished\n")
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(`
name: effects
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file]}
  - {module: hostile.wasm, only: [append], grant: {workspace: rw}}
`), 0o644))
	return dir
}

func workspaceFiles(t *testing.T, ws string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, _ := os.ReadDir(ws)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(ws, e.Name()))
		must(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

func TestKillDashNineEffectsExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := effectsAgent(t, bin)
	cache := cacheForTests(t)
	agent := filepath.Join(dir, "agent.yaml")
	run := func(ws string) *exec.Cmd {
		must(t, os.MkdirAll(ws, 0o755))
		return exec.Command(bin, "run", "--store", filepath.Join(ws, "..", filepath.Base(ws)+"-store"), "--cache", cache,
			"--json", "--id", "e", "--workspace", ws, "-f", agent)
	}
	// A first run fills the compile cache, so that the timed one is what
	// a trial kills.
	if out, err := run(filepath.Join(t.TempDir(), "warm")).CombinedOutput(); err != nil {
		t.Fatalf("warm-up run: %v\n%s", err, out)
	}
	cleanWS := filepath.Join(t.TempDir(), "clean")
	start := time.Now()
	if out, err := run(cleanWS).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	full := time.Since(start)
	want := workspaceFiles(t, cleanWS)
	var lines []string
	for i := 1; i <= 8; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	if want["log.txt"] != strings.Join(lines, "\n")+"\n" || len(want) != 9 {
		t.Fatalf("the uninterrupted run left %v", want)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for trial := 0; trial < *crashTrials; trial++ {
		delay := time.Duration(rng.Int63n(int64(full)))
		t.Run(fmt.Sprintf("kill-after-%s", delay.Round(time.Millisecond)), func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			cmd := run(ws)
			var out bytes.Buffer
			cmd.Stdout = &out
			must(t, cmd.Start())
			time.Sleep(delay)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			store := filepath.Join(ws, "..", "ws-store")
			// replay asks the model again for a round that changed nothing,
			// so the deterministic script redoes what the kill cut short.
			res := exec.Command(bin, "resume", "--strategy", "replay", "--json", "--store", store, "--cache", cache, "e")
			resOut, err := res.CombinedOutput()
			if code := res.ProcessState.ExitCode(); code == exitUsage && !strings.Contains(out.String(), "checkpoint_saved") {
				return // killed before the agent was stored
			} else if err != nil {
				t.Fatalf("resume: %v\n%s", err, resOut)
			}
			// A round with a change journaled is kept, not replayed: its
			// calls in flight are sealed, and their changes are nowhere.
			sealed := map[string]bool{}
			for _, e := range jsonLines[keptEvent](resOut) {
				for _, s := range e.Sealed {
					sealed[s.Call] = true
				}
			}
			if len(sealed) > 0 {
				checkKeptWorkspace(t, ws, 8, sealed)
			} else if got := workspaceFiles(t, ws); !mapsEqual(got, want) {
				t.Fatalf("after kill and resume the workspace is\n%v\nwant\n%v\nresume said:\n%s", got, want, resOut)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
