package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a grant a step's agent asks of its tools that the host
// refuses (a tool asking for more than its grant, an allow entry that does
// not read, WASI imports the grant does not allow) was found only when
// that step started, after the steps before it had done their work and the
// workflow was stored, which kept the bad file for every resume. `cairn
// workflow run` refuses the workflow up front, with the host's own check
// of an agent's start: exit 2, the step and the problem named, step one's
// write not made, nothing stored.
func TestWorkflowStepGrantRefusedBeforeAnyStepRuns(t *testing.T) {
	for _, tc := range []struct{ name, grant, want string }{
		{"tool asks for more", "{workspace: ro}", `tool "write_file": tool asks for more than is granted: add to its grant in the agent file: workspace: rw`},
		{"allow entry a URL", `{workspace: rw, net: {allow: ["https://example.com/"]}}`, `allow entry "https://example.com/": write a host`},
		{"imports not allowed", "{workspace: rw, imports: [fd_write]}", "which its grant does not allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := flowFiles(t, map[string]string{
				"script.yaml": "turns:\n  - text: fine\n",
				"two.yaml": "name: two\nmodel: {provider: script, script: script.yaml}\n" +
					"tools: [{module: builtin, only: [write_file], grant: " + tc.grant + "}]\n",
				"flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
					"  - {name: one, tool: write_file, module: builtin, input: {path: one.txt, content: ran}}\n" +
					"  - {name: two, needs: [one], agent: two.yaml, prompt: go}\n"})
			store := t.TempDir()
			code, out, errOut := cairn(t, "workflow", "run", "--id", "wf", "--store", store, "--cache", cacheForTests(t), filepath.Join(dir, "flow.yaml"))
			if code != exitUsage || !strings.Contains(errOut, "step two: tool module builtin: ") || !strings.Contains(errOut, tc.want) ||
				strings.Contains(errOut, "step one") || strings.Contains(errOut, "workflow resume") {
				t.Fatalf("exit %d\n%s%s; want exit %d naming step two and %q, advising no resume", code, out, errOut, exitUsage, tc.want)
			}
			if strings.Contains(out, "step one") {
				t.Fatalf("step one started:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "ws", "one.txt")); !os.IsNotExist(err) {
				t.Fatalf("step one's write was made (%v)", err)
			}
			if files := storedFiles(t, store); len(files) != 0 {
				t.Fatalf("stored %v", files)
			}
			if code, out, _ := cairn(t, "workflow", "ls", "--store", store); code != exitDone || strings.Contains(out, "wf") {
				t.Fatalf("workflow ls: exit %d\n%s", code, out)
			}
		})
	}
}
