package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a --model script:PATH that is not there was refused with
// "fix the agent file, or make it", though the agent file did not name
// it: the path came from the command line. The refusal names --model, and
// no agent is made.
func TestModelFlagScriptThatIsNotThereAdvisesTheFlag(t *testing.T) {
	script := filepath.Join(t.TempDir(), "nosuch.yaml")
	store := t.TempDir()
	code, _, errOut := cairn(t, "run", "-f", "../../examples/hello/agent.yaml", "--model", "script:"+script,
		"--workspace", t.TempDir(), "--store", store, "--id", "m", "--cache", cacheForTests(t))
	if code != exitUsage || !strings.Contains(errOut, script) || strings.Contains(errOut, "agent file") ||
		!strings.Contains(errOut, "--model") {
		t.Fatalf("--model script:%s: exit %d, stderr %q; want exit %d naming the script and --model", script, code, errOut, exitUsage)
	}
	if code, out, _ := cairn(t, "ls", "--store", store); code != 0 || strings.Contains(out, "\nm ") {
		t.Fatalf("ls after the refused run: exit %d\n%s", code, out)
	}
}
