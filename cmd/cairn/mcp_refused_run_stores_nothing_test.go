package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Regression: a run refused because an MCP server its agent file names
// does not start stored the new agent's blobs (its agent file, script,
// modules, and its workspace as its first past) before it started the
// server, and left them for gc's hour. The servers are started before
// anything is stored: the refused run leaves the store exactly as it was,
// here a store that holds another agent already.
func TestRunRefusedForAnMCPServerThatDoesNotStartLeavesTheStoreAsItWas(t *testing.T) {
	agentFile, store := scriptAgent(t, "name: a\nmodel: {provider: script, script: script.yaml}\nworkspace: workspace\ntools: [{module: builtin}]\n",
		"turns: [{text: hi}]\n")
	must(t, os.WriteFile(filepath.Join(filepath.Dir(agentFile), "workspace", "notes.txt"), []byte("kept as the first past\n"), 0o644))
	if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "other", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run of another agent: exit %d: %s", code, errOut)
	}
	// The same agent file, and a server that is not there; the workspace
	// holds a file the store has never seen.
	server := filepath.Join(t.TempDir(), "agent.yaml")
	b, err := os.ReadFile(agentFile)
	must(t, err)
	must(t, os.WriteFile(server, append(b, "mcp:\n  - name: x\n    command: [/nonexistent/server]\n"...), 0o644))
	must(t, os.Symlink(filepath.Join(filepath.Dir(agentFile), "script.yaml"), filepath.Join(filepath.Dir(server), "script.yaml")))
	must(t, os.Symlink(filepath.Join(filepath.Dir(agentFile), "workspace"), filepath.Join(filepath.Dir(server), "workspace")))
	must(t, os.WriteFile(filepath.Join(filepath.Dir(agentFile), "workspace", "new.txt"), []byte("never stored\n"), 0o644))

	before := storeListing(t, store)
	code, _, errOut := cairn(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "a", "-f", server, "go")
	if code != exitFailed || !strings.Contains(errOut, "mcp server x") {
		t.Fatalf("run: exit %d: %s; want %d, naming the server", code, errOut, exitFailed)
	}
	if after := storeListing(t, store); after != before {
		t.Fatalf("the refused run changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// storeListing lists everything under store: each directory, and each
// file with its size and the digest of its content.
func storeListing(t *testing.T, store string) string {
	t.Helper()
	var out strings.Builder
	err := filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(store, p)
		if d.IsDir() {
			fmt.Fprintf(&out, "%s/\n", rel)
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&out, "%s %d %x\n", rel, len(b), sha256.Sum256(b))
		return nil
	})
	must(t, err)
	return out.String()
}

// A new agent's run killed while it waits for its MCP server to start
// (one that never answers) has stored nothing of the agent: the servers
// start before it is stored, so no agent is left, nor any blob, and a
// run of that id given again, its server answering, makes it, where it
// was refused as an agent to resume first.
func TestKillWhileANewAgentsMCPServerStartsLeavesNothingStored(t *testing.T) {
	bin := cairnBinary(t)
	dir := hangingToyAgent(t, "")
	agent, store := filepath.Join(dir, "agent.yaml"), filepath.Join(dir, "store")
	must(t, os.WriteFile(filepath.Join(dir, "ws", "notes.txt"), []byte("never stored\n"), 0o644))
	b, err := os.ReadFile(agent)
	must(t, err)
	hanging := filepath.Join(dir, "hanging.yaml")
	must(t, os.WriteFile(hanging, bytes.Replace(b, []byte("[./toyserver]"), []byte("[./toyserver, hang-at-start]"), 1), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte("turns: [{text: hi}]\n"), 0o644))
	run := exec.Command(bin, "run", "--store", store, "--cache", cacheForTests(t), "--id", "o", "-f", hanging, "go")
	must(t, run.Start())
	var pid int
	for deadline := time.Now().Add(time.Minute); pid == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "start.pid")); err == nil && len(b) > 0 {
			pid, _ = strconv.Atoi(string(b))
		}
		if time.Now().After(deadline) {
			run.Process.Kill()
			t.Fatal("the server did not start within a minute")
		}
	}
	must(t, run.Process.Kill())
	run.Wait()
	syscall.Kill(pid, syscall.SIGKILL)
	if blobs := storedBlobs(t, store); len(blobs) != 0 {
		t.Errorf("the run killed while its server started stored %d blobs:\n%s", len(blobs), strings.Join(blobs, "\n"))
	}
	if code, out, errOut := cairnProcess(t, "show", "--store", store, "o"); code == exitDone {
		t.Errorf("show after the kill: exit %d %q %s; want no agent", code, out, errOut)
	}
	if code, out, errOut := cairnProcess(t, "run", "--store", store, "--cache", cacheForTests(t), "--id", "o", "-f", agent, "go"); code != exitDone {
		t.Fatalf("the same run again: exit %d %s%s", code, out, errOut)
	}
}
