package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Regression: with the agent's whole directory removed (or moved out of
// the store) while a run held it, the run stopped saying that its lock
// file was removed, that the agent was kept as of its last durable record
// and to resume it; resume then found no agent. The run stops with exit
// 5 saying that the agent's directory is gone from the store, that there
// is nothing to resume, and what to do.
func TestAgentDirectoryRemovedMidRunSaysSo(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	cache := cacheForTests(t)
	for _, how := range []string{"removed", "moved"} {
		t.Run(how, func(t *testing.T) {
			m := newStallingModel(t, 3)
			dir := t.TempDir()
			must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
			agent := filepath.Join(dir, "agent.yaml")
			must(t, os.WriteFile(agent, []byte(fmt.Sprintf(`name: lk
model: {provider: openai, name: m, base_url: %s/v1, max_retries: -1}
prompt: look around
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
limits: {max_rounds: 5}
`, m.URL)), 0o644))
			store := filepath.Join(dir, "store")
			run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "lk", "-f", agent)
			var stderr bytes.Buffer
			run.Stderr = &stderr
			must(t, run.Start())
			select {
			case <-m.stalled: // rounds 1 and 2 are committed; the run waits for the model
			case <-time.After(time.Minute):
				run.Process.Kill()
				t.Fatalf("the run never reached its third model request\n%s", stderr.String())
			}
			agentDir := filepath.Join(store, "agents", "lk")
			if how == "removed" {
				must(t, os.RemoveAll(agentDir))
			} else {
				must(t, os.Rename(agentDir, filepath.Join(dir, "lk-aside")))
			}
			close(m.release)
			run.Wait()
			msg := stderr.String()
			if code := run.ProcessState.ExitCode(); code != exitLocked {
				t.Fatalf("exit %d, want %d\n%s", code, exitLocked, msg)
			}
			if !strings.Contains(msg, "its directory "+agentDir+" was removed or moved") ||
				strings.Contains(msg, "then resume it") || strings.Contains(msg, "lock file") {
				t.Fatalf("the run said:\n%s\nwant that the agent's directory is gone, not that its lock file was removed and to resume it", msg)
			}
			if _, err := os.Stat(filepath.Join(agentDir, "lock")); err == nil {
				t.Fatal("the stopped run made the agent's lock file again")
			}
		})
	}
}
