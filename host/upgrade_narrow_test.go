package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// upgradeParent delegates to kid, whose own agent file (kid.yaml, made of
// kidTools) has it ask before each write, so the child waits for approval
// with its definition stored.
const upgradeParent = `
name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
sandbox: {memory: 16MiB, timeout: 2s}
tools:
  - module: builtin
  - module: fetch
    grant: {net: {allow: ["127.0.0.1:1"]}}
agents:
  - name: kid
    description: writes
    file: kid.yaml
`

func kidFile(tools string) string {
	return `name: kid
model: {provider: script, script: kid-script.yaml}
approvals: [{tool: write_file, action: ask}]
` + tools
}

const kidTools = `tools:
  - {module: builtin, only: [write_file]}
  - {module: fetch, grant: {net: {allow: ["127.0.0.1:1"]}}}
`

// Regression: `cairn resume CHILD --upgrade` read the sub-agent's agent
// file again without checking that it still narrows its parent's: a child
// whose file was edited to reach any host, send POST or raise its sandbox
// limits ran with that. Now the upgrade is refused with what the check of
// a delegation says, nothing is journaled, and the lock is let go.
func TestUpgradeOfASubAgentWhoseFileWidensItsGrantIsRefused(t *testing.T) {
	cases := []struct{ name, tools, want string }{
		{"net grant", `tools:
  - {module: builtin, only: [write_file]}
  - module: fetch
    grant: {net: {allow: ["*"], methods: [GET, POST]}}
`, `kid.yaml line 6: sub-agent kid: tool module fetch asks for net: {allow: [*]}, net: {methods: [POST]}, which its parent's grant does not have`},
		{"sandbox limits", `sandbox: {timeout: 1h}
` + kidTools, `kid.yaml line 6: sub-agent kid: tool module builtin would run with timeout: 1h0m0s (its parent's 2s)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, store := fileEngine(t)
			af := teamIn(t, upgradeParent, `turns:
  - tool_calls: [{name: delegate, input: {agent: kid, task: write}}]
  - text: done
`, map[string]string{"kid.yaml": kidFile(kidTools),
				"kid-script.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: a}}]\n  - text: wrote\n"})
			res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
			must(t, err)
			if res.Status != StatusAwaitingApproval {
				t.Fatalf("run: %+v", res)
			}
			kid := childID("lead", "kid", "call_1_0")
			before, err := store.Read(kid)
			must(t, err)

			must(t, os.WriteFile(filepath.Join(af.Dir, "kid.yaml"), []byte(kidFile(tc.tools)), 0o644))
			_, err = eng.Resume(context.Background(), ResumeOptions{ID: kid, Upgrade: true, AutoDeny: true})
			if !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("resume --upgrade of a widened sub-agent: %v; want ErrSubAgent saying %q", err, tc.want)
			}
			after, err := store.Read(kid)
			must(t, err)
			if after.JournalBytes != before.JournalBytes || !reflect.DeepEqual(after.State.Definition, before.State.Definition) {
				t.Errorf("the refused upgrade wrote to the store: journal %d bytes, then %d", before.JournalBytes, after.JournalBytes)
			}
			lock, err := store.Lock(kid, checkpoint.ThisProcess("test"))
			if err != nil {
				t.Fatalf("the refused upgrade kept the lock: %v", err)
			}
			must(t, lock.Unlock())
		})
	}
}

// The check of an upgrade is the delegation's: a sub-agent's file edited
// within its parent's grants (its limits left out are its parent's) is
// taken up.
func TestUpgradeOfASubAgentWithinItsParentsGrantGoesOn(t *testing.T) {
	eng, _ := fileEngine(t)
	af := teamIn(t, upgradeParent, `turns:
  - tool_calls: [{name: delegate, input: {agent: kid, task: write}}]
  - text: done
`, map[string]string{"kid.yaml": kidFile(kidTools),
		"kid-script.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: a}}]\n  - text: wrote\n"})
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
	kid := childID("lead", "kid", "call_1_0")
	must(t, os.WriteFile(filepath.Join(af.Dir, "kid.yaml"), []byte(kidFile(`sandbox: {memory: 8MiB}
tools:
  - {module: builtin, only: [write_file]}
  - {module: fetch, grant: {net: {allow: ["127.0.0.1:1"], methods: [GET]}}}
`)), 0o644))
	res, err = eng.Resume(context.Background(), ResumeOptions{ID: kid, Upgrade: true, AutoDeny: true})
	if err != nil {
		t.Fatalf("resume --upgrade of a narrower sub-agent: %v", err)
	}
	if res.Status == StatusFailed {
		t.Fatalf("resume --upgrade: %+v", res)
	}
}

// An agent made from a sub-agent's definition (a workflow's delegation
// step) and resumed with Upgrade under the agent file it was made from
// (ResumeOptions.Above) is checked against that file as it was when made.
func TestUpgradeOfAnAgentMadeFromASubAgentIsCheckedAgainstAbove(t *testing.T) {
	eng, _ := fileEngine(t)
	parent := teamIn(t, upgradeParent, "turns:\n  - text: unused\n", map[string]string{"kid.yaml": kidFile(kidTools),
		"kid-script.yaml": "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: a}}]\n  - text: wrote\n"})
	af, err := parent.SubAgentFile("kid")
	must(t, err)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "step", Prompt: "go",
		Workspace: filepath.Join(parent.Dir, "workspace")})
	must(t, err)
	if res.Status != StatusAwaitingApproval {
		t.Fatalf("run: %+v", res)
	}
	must(t, os.WriteFile(filepath.Join(parent.Dir, "kid.yaml"), []byte(kidFile("sandbox: {memory: 1GiB}\n"+kidTools)), 0o644))
	_, err = eng.Resume(context.Background(), ResumeOptions{ID: "step", Upgrade: true, AutoDeny: true, Above: parent})
	want := "kid.yaml line 6: sub-agent kid: tool module builtin would run with memory: 1GiB (its parent's 16MiB)"
	if !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), want) {
		t.Fatalf("resume with Upgrade and Above of a widened definition: %v; want ErrSubAgent saying %q", err, want)
	}
}
