package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/sandbox"
)

// Extra mounts are read-only and only for the module granted them.
func TestExtraMounts(t *testing.T) {
	agent := `
name: grants
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - module: hostile.wasm
    grant: {mounts: [{host: data, guest: /data}]}
    only: [cat]
`
	script := `
turns:
  - tool_calls:
      - {name: cat, input: {path: /data/facts.txt}}
      - {name: cat, input: {path: /etc/hostname}}
  - text: done
`
	af := agentIn(t, agent, script)
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "hostile.wasm"))
	if err := os.Mkdir(filepath.Join(af.Dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(af.Dir, "data", "facts.txt"), []byte("water is wet"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, events := collect(t, RunOptions{Agent: af, Prompt: "go"})
	got := map[string]*Call{}
	for _, c := range toolEnds(events) {
		got[c.ID] = c
	}
	if c := got["call_1_0"]; c.Outcome != OutcomeOK || !strings.HasPrefix(c.Output, "water is wet (write beside it: ") || strings.HasSuffix(c.Output, "<nil>)") {
		t.Errorf("cat of the granted mount: %+v; want its content and a refused write", c)
	}
	if _, err := os.Stat(filepath.Join(af.Dir, "data", "facts.txt.new")); !os.IsNotExist(err) {
		t.Error("a tool wrote through a read-only mount")
	}
	if c := got["call_1_1"]; c.Outcome != OutcomeError {
		t.Errorf("cat outside every mount: %+v", c)
	}
}

// An imports list narrower than what a module imports is refused when the
// agent starts, as a grant narrower than its manifest asks is, naming each
// import; no call runs. (It was once found only at the tool's first call.)
func TestImportsGrantRefusedAtStart(t *testing.T) {
	agent := `
name: grants
model: {provider: script, script: script.yaml}
workspace: workspace
tools:
  - module: other.wasm
    grant: {imports: [fd_write]}
    only: [echo]
`
	af := agentIn(t, agent, "turns:\n  - tool_calls: [{name: echo, input: {text: hi, n: 1}}]\n  - text: done\n")
	copyFile(t, hostileWasm, filepath.Join(af.Dir, "other.wasm"))
	var events []Event
	_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go", OnEvent: func(e Event) { events = append(events, e) }})
	if !errors.Is(err, ErrGrant) || !strings.Contains(err.Error(), "fd_read") || !strings.Contains(err.Error(), "add them to its grant's imports") {
		t.Fatalf("got %v; want ErrGrant naming fd_read", err)
	}
	// The message ends with the whole line to put in the grant: what it
	// allows and what the module lacks.
	line := err.Error()[strings.LastIndex(err.Error(), "imports: ["):]
	if !strings.HasSuffix(line, "]") || !strings.Contains(line, "fd_read") || !strings.Contains(line, "fd_write") {
		t.Errorf("got %q; want the grant's imports line with fd_read and fd_write", line)
	}
	if ends := toolEnds(events); len(ends) != 0 {
		t.Fatalf("%d calls ran", len(ends))
	}
}

func TestExtraMountValidated(t *testing.T) {
	for _, bad := range []string{`{host: data, guest: relative}`, `{host: data, guest: /}`, `{host: data, guest: /workspace}`, `{guest: /data}`} {
		_, err := ParseAgentFile([]byte("name: a\nmodel: {provider: script}\ntools: [{module: x.wasm, grant: {mounts: ["+bad+"]}}]\n"), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "grant.mounts[0]") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// A call of a tool that may only read the workspace stages nothing and
// makes no staging directory; a call of one that may write gets its own.
func TestOnlyWritersStage(t *testing.T) {
	ws := t.TempDir()
	round := filepath.Join(t.TempDir(), "round-1")
	view := workspaceView{dir: ws, staging: func(call string) string { return filepath.Join(round, call) }}
	for _, readOnly := range []bool{true, false} {
		p := sandbox.Policy{Mounts: []sandbox.Mount{{HostPath: ws, GuestPath: abi.WorkspaceDir, ReadOnly: readOnly}}}
		ov, err := (&tool{}).overlay(&p, view, "call")
		if err != nil {
			t.Fatal(err)
		}
		ov.Close()
		_, err = os.Stat(filepath.Join(round, "call"))
		if made := err == nil; made == readOnly {
			t.Errorf("read-only %v: staging directory made %v", readOnly, made)
		}
		if p.Mounts[0].Overlay != ov || p.Mounts[0].ReadOnly != readOnly {
			t.Errorf("read-only %v: the mount is %+v", readOnly, p.Mounts[0])
		}
	}
}
