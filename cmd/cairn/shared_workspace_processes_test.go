package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Two agents run by two processes on one workspace write the same file
// round after round. Each process checked a round's changes against the
// workspace and then applied them; the other's apply between the two made
// the apply fail, and the run with it ("apply the changes of call …"), or
// the two applies wrote the same temporary file ("renameat
// .cairn-apply-…: no such file or directory"). The workspace is locked
// across processes from the check to the apply: a change that loses the
// race is refused at the check, the model told, and both runs finish.
func TestTwoProcessesOnOneWorkspaceFinishTheirRuns(t *testing.T) {
	t.Parallel()
	const rounds = 40 // within the default max_rounds of 50
	bin := cairnBinary(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "workspace")
	must(t, os.Mkdir(ws, 0o755))
	store, cache := filepath.Join(dir, "store"), cacheForTests(t)
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for _, id := range []string{"a", "b"} {
		var script strings.Builder
		script.WriteString("turns:\n")
		for i := range rounds {
			fmt.Fprintf(&script, "  - tool_calls: [{name: write_file, input: {path: notes.txt, content: %s%d}}]\n", id, i)
		}
		script.WriteString("  - text: finished\n")
		sub := filepath.Join(dir, id)
		must(t, os.Mkdir(sub, 0o755))
		must(t, os.WriteFile(filepath.Join(sub, "script.yaml"), []byte(script.String()), 0o644))
		agent := filepath.Join(sub, "agent.yaml")
		must(t, os.WriteFile(agent, []byte("name: writer\nmodel: {provider: script, script: script.yaml}\n"+
			"tools: [{module: builtin, only: [write_file]}]\n"), 0o644))
		cmd := exec.Command(bin, "run", "--store", store+"-"+id, "--cache", cache, "--id", id, "--workspace", ws, "-f", agent)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	for _, cmd := range cmds {
		must(t, cmd.Start())
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil || !strings.Contains(outs[i].String(), "finished") {
			t.Errorf("agent %s: %v\n%s", cmd.Args[7], err, outs[i])
		}
	}
}
