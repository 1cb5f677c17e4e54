package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Regression: an agent killed while a call of its round had finished,
// its change staged and not yet applied, could be exported and imported,
// but never resumed in the other store: "stage out.txt again from the
// store: blob sha256:…: not found". The export left out the file the
// change writes, which was only staged. It carries it now, and the resume
// in the other store applies the change.
func TestExportOfAKilledRoundCarriesItsStagedChanges(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`turns:
  - tool_calls: [{name: write_file, input: {path: out.txt, content: kept}}, {name: spin, input: {}}]
  - text: finished
`), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`
name: moved
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - {module: builtin, only: [write_file]}
  - {module: hostile.wasm, only: [spin], limits: {timeout: 60s}}
sandbox: {timeout: 60s}
`), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	store, cache := filepath.Join(dir, "store"), cacheForTests(t)
	cmd := exec.Command(bin, "run", "--store", store, "--cache", cache, "--json", "--id", "m", "-f", agent)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var out bytes.Buffer
	readLinesUntil(bufio.NewReader(stdout), &out, func(line []byte) bool {
		var e keptEvent
		return json.Unmarshal(line, &e) == nil && e.Type == "tool_start" && e.Call.ID == "call_1_1"
	})
	time.Sleep(300 * time.Millisecond) // the write finishes, staged, while spin runs
	cmd.Process.Kill()
	cmd.Wait()

	archive := filepath.Join(dir, "m.cairn")
	if b, err := exec.Command(bin, "export", "--store", store, "-o", archive, "m").CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, b)
	}
	other, ws := filepath.Join(dir, "other"), filepath.Join(dir, "elsewhere")
	if b, err := exec.Command(bin, "import", "--store", other, archive).CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, b)
	}
	b, err := exec.Command(bin, "resume", "--store", other, "--cache", cache, "--workspace", ws, "m").CombinedOutput()
	if err != nil {
		t.Fatalf("resume in the other store: %v\n%s", err, b)
	}
	if got, err := os.ReadFile(filepath.Join(ws, "out.txt")); err != nil || string(got) != "kept" {
		t.Errorf("out.txt in the other store's workspace: %q, %v; want the finished call's change\n%s", got, err, b)
	}
}
