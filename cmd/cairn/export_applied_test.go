package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/internal/pgtest"
)

// Regression: an export of an agent whose interrupted round had applied
// one call's changes and not another's (its apply refused: the workspace
// changed under it) left out the file the applied call wrote. The archive
// was imported whole, and the resume elsewhere failed on it, "blob …: not
// found". The export holds the files of every change its interrupted
// round keeps, applied or not, and the copy resumes.
func TestExportOfARoundWithAnAppliedCallResumesElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a call to its time limit")
	}
	t.Parallel()
	srv := pgtest.Shared(t)
	from, to := srv.NewDatabase(t), srv.NewDatabase(t)
	dir := interruptedWithAppliedCall(t, from)

	archive := filepath.Join(dir, "y.cx")
	if code, _, errOut := cairnProcess(t, "export", "--store", from, "-o", archive, "y"); code != exitDone {
		t.Fatalf("export: exit %d %s", code, errOut)
	}
	if code, _, errOut := cairnProcess(t, "import", "--store", to, archive); code != exitDone {
		t.Fatalf("import: exit %d %s", code, errOut)
	}
	elsewhere := filepath.Join(dir, "elsewhere")
	if code, _, errOut := cairnProcess(t, "resume", "--store", to, "--cache", cacheForTests(t), "--workspace", elsewhere, "y"); code != exitDone {
		t.Fatalf("resume of the imported copy: exit %d %s", code, errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(elsewhere, "log.txt")); string(got) != "line 1\n" {
		t.Fatalf("log.txt elsewhere: %q", got)
	}
}

// staged reports whether the call has staged a file under dir.
func staged(dir, call string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.Contains(p, call) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// interruptedWithAppliedCall runs agent "y" in the store at url until its
// first round stops after one call's change was applied (append wrote
// log.txt) and before another's (write_file's, refused: the workspace
// changed under it); and returns the directory of the agent file.
func interruptedWithAppliedCall(t *testing.T, url string) string {
	t.Helper()
	bin := cairnBinary(t)
	dir := t.TempDir()
	hostileModule(t, bin, dir)
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(`turns:
  - tool_calls: [{name: append, input: {path: log.txt, line: line 1}}, {name: write_file, input: {path: d/f.txt, content: "x"}}, {name: spin, input: {}}]
  - text: finished
`), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`name: applied
model: {provider: script, script: script.yaml}
workspace: workspace
sandbox: {timeout: 5s}
tools:
  - {module: builtin, only: [write_file]}
  - {module: hostile.wasm, only: [append, spin], grant: {workspace: rw}}
`), 0o644))
	ws := filepath.Join(dir, "ws")
	must(t, os.MkdirAll(ws, 0o755))
	cmd := exec.Command(bin, "run", "--json", "--store", url, "--cache", cacheForTests(t), "--id", "y",
		"--workspace", ws, "-f", agent)
	tmp := filepath.Join(dir, "tmp") // where the calls stage their changes
	must(t, os.MkdirAll(tmp, 0o700))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	must(t, cmd.Start())
	// While spin runs, once write_file has staged d/f.txt, d is made a
	// file: write_file's apply is refused, append's is made.
	for deadline := time.Now().Add(time.Minute); !staged(tmp, "call_1_1"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("write_file staged nothing in a minute")
		}
	}
	must(t, os.WriteFile(filepath.Join(ws, "d"), nil, 0o644))
	if err := cmd.Wait(); err == nil {
		t.Fatal("the run ended well though its workspace changed under a call")
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "log.txt")); string(got) != "line 1\n" {
		t.Fatalf("append's change was not applied before the stop: log.txt %q", got)
	}

	return dir
}
