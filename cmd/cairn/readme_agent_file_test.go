package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: README's agent file, which shows every key, was refused as
// written: its textstats grant's imports: [fd_read, fd_write] left out
// the WASI functions the Go module imports. The file is run here as
// README gives it, beside what it names (the example's script and
// workspace, a reference directory, the textstats module), and runs
// until its ask rule stops it at the write of REPORT.md.
func TestReadmeAgentFileRunsAsWritten(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	must(t, err)
	_, rest, ok := strings.Cut(string(b), "\n### Agent files\n")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	file, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README shows no agent file under ### Agent files")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "agent")
	copyFile(t, "../../examples/hello/script.yaml", filepath.Join(dir, "script.yaml"))
	for _, f := range []string{"notes.md", "todo.txt"} {
		copyFile(t, filepath.Join("../../examples/hello/workspace", f), filepath.Join(dir, "workspace", f))
	}
	must(t, os.MkdirAll(filepath.Join(dir, "reference"), 0o755))
	copyFile(t, "../../examples/tools/textstats/textstats.wasm", filepath.Join(root, "tools/textstats/textstats.wasm"))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(file), 0o644))

	code, out, errOut := cairn(t, "run", "--store", filepath.Join(root, "store"), "--cache", cacheForTests(t), "-f", agent)
	if code != exitApproval || !strings.Contains(out, "awaiting approval of call_4_0 (write_file)") {
		t.Fatalf("README's agent file: exit %d, want %d, awaiting approval of the write of REPORT.md\nstdout: %s\nstderr: %s",
			code, exitApproval, out, errOut)
	}
}
