package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Regression: a stdout closed early (`cairn run ... | head -1`) made Go's
// runtime end the process with SIGPIPE at its next write, in the middle of
// a round. The run goes on to its end, its output dropped, with its usual
// exit code and a note on stderr.
func TestClosedStdoutDoesNotKillTheRun(t *testing.T) {
	t.Parallel()
	bin := cairnBinary(t)
	dir := t.TempDir()
	must(t, os.Mkdir(filepath.Join(dir, "workspace"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "workspace", "a.txt"), []byte("alpha\n"), 0o644))
	// Each round's text is printed whole: far more than a pipe holds, so
	// the run writes on after the reader is gone, whatever the timing.
	text := strings.Repeat("word ", 6000)
	var script strings.Builder
	script.WriteString("turns:\n")
	for range 8 {
		fmt.Fprintf(&script, "  - text: %s\n    tool_calls: [{name: read_file, input: {path: a.txt}}]\n", text)
	}
	script.WriteString("  - text: finished\n")
	must(t, os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(script.String()), 0o644))
	agent := filepath.Join(dir, "agent.yaml")
	must(t, os.WriteFile(agent, []byte(`name: pipe
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [read_file]}]
`), 0o644))
	store, cache := t.TempDir(), cacheForTests(t)

	r, w, err := os.Pipe()
	must(t, err)
	run := exec.Command(bin, "run", "--store", store, "--cache", cache, "--id", "p", "-f", agent)
	run.Stdout = w
	var stderr strings.Builder
	run.Stderr = &stderr
	must(t, run.Start())
	w.Close()
	first, err := bufio.NewReader(r).ReadString('\n')
	r.Close() // as head -1 does
	if err != nil || !strings.HasPrefix(first, "agent p") {
		t.Fatalf("first line %q, %v", first, err)
	}
	waitExit(t, run, "cairn did not end within a minute")
	if ws := run.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() || ws.ExitStatus() != exitDone {
		t.Fatalf("cairn ended with %v; want exit %d\nstderr: %s", run.ProcessState, exitDone, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stdout was closed") {
		t.Errorf("stderr does not say stdout was closed: %q", stderr.String())
	}
	out, err := exec.Command(bin, "show", "--store", store, "p").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "status     done") || !strings.Contains(string(out), "round 9 ") {
		t.Fatalf("show after the run: %v\n%s", err, out)
	}
}

// dropClosed passes writes on until one finds the reader gone, then takes
// and drops them, saying so once where it was told to; other errors it
// returns.
func TestDropClosedDropsAfterEPIPE(t *testing.T) {
	r, w, err := os.Pipe()
	must(t, err)
	defer w.Close()
	d := dropWhenClosed(w)
	var note strings.Builder
	d.noteOn(&note)
	if n, err := d.Write([]byte("read\n")); n != 5 || err != nil {
		t.Fatalf("write before close: %d, %v", n, err)
	}
	r.Close()
	for range 3 {
		if n, err := d.Write([]byte("dropped\n")); n != 8 || err != nil {
			t.Fatalf("write after close: %d, %v; want it taken", n, err)
		}
	}
	if got := strings.Count(note.String(), "stdout was closed"); got != 1 {
		t.Fatalf("note said %d times: %q", got, note.String())
	}
	w.Close()
	if _, err := dropWhenClosed(w).Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed file succeeded; want its error")
	}
}
