package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host"
)

// stepParentFiles is a workflow whose one step delegates to alpha, a
// sub-agent its parent file lead.yaml declares and whose writes it denies.
// alpha's own max_rounds stops it after one round; given more rounds it
// would write b.txt. With a sub-agent, alpha hands its task to beta, which
// is stopped and would write the same way.
func stepParentFiles(t *testing.T, sub bool) string {
	t.Helper()
	writes := "turns:\n  - tool_calls: [{name: write_file, input: {path: a.txt, content: x}}]\n" +
		"  - tool_calls: [{name: write_file, input: {path: b.txt, content: y}}]\n  - text: wrote both\n"
	files := map[string]string{
		"lead.yaml": "name: lead\nmodel: {provider: script}\ntools: [{module: builtin}]\n" +
			"approvals: [{tool: write_file, action: deny}]\nagents: [{name: alpha, file: alpha.yaml}]\n",
		"alpha.yaml": "name: alpha\nmodel: {provider: script, script: alpha-script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\nlimits: {max_rounds: 1}\n",
		"alpha-script.yaml": writes,
		"flow.yaml":         "name: f\nworkspace: ws\nsteps:\n  - {name: one, parent: lead.yaml, delegate: alpha, task: go}\n",
	}
	if sub {
		files["alpha.yaml"] = "name: alpha\nmodel: {provider: script, script: alpha-script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\nagents: [{name: beta, file: beta.yaml}]\n"
		files["alpha-script.yaml"] = "turns:\n  - tool_calls: [{name: delegate, input: {agent: beta, task: write}}]\n  - text: delegated\n"
		files["beta.yaml"] = "name: beta\nmodel: {provider: script, script: beta-script.yaml}\n" +
			"tools: [{module: builtin, only: [write_file]}]\nlimits: {max_rounds: 1}\n"
		files["beta-script.yaml"] = writes
	}
	return flowFiles(t, files)
}

// Regression: a workflow's delegation step's agent met its parent file's
// approval rules while the workflow ran it, but resumed by itself (`cairn
// resume`, with --upgrade too), or a sub-agent of it resumed by itself,
// met only its own: a write the parent file denies was made. The parent
// file is kept with the step's agent, and every resume of it, or of an
// agent under it, is bound by its rules.
func TestWorkflowDelegationStepResumedAloneKeepsItsParentsRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sub     bool
		upgrade bool
	}{
		{name: "resume of the step's agent"},
		{name: "resume --upgrade of the step's agent", upgrade: true},
		{name: "resume of a sub-agent of the step's agent", sub: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := stepParentFiles(t, tc.sub)
			store := t.TempDir()
			flags := []string{"--store", store, "--cache", cacheForTests(t)}
			code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...)
			if code != exitPaused {
				t.Fatalf("workflow run: exit %d, %s; want it paused at the step agent's max_rounds", code, errOut)
			}
			if _, err := os.Stat(filepath.Join(dir, "ws", "a.txt")); err == nil {
				t.Fatal("the workflow's run wrote a.txt, which the parent file denies")
			}
			agent := "w.one"
			if tc.sub {
				for id := range lsStatusOf(t, store) {
					if strings.HasPrefix(id, "w.one.beta-") {
						agent = id
					}
				}
				if agent == "w.one" {
					t.Fatalf("ls lacks the sub-agent beta: %v", lsStatusOf(t, store))
				}
			}
			args := []string{"resume", "--max-rounds", "5"}
			if tc.upgrade {
				args = append(args, "--upgrade")
			}
			code, out, errOut := cairn(t, append(append(args, agent), flags...)...)
			if _, err := os.Stat(filepath.Join(dir, "ws", "b.txt")); err == nil {
				t.Fatalf("cairn %s: exit %d\n%s%s\nit wrote b.txt, which the parent file lead.yaml denies", strings.Join(append(args, agent), " "), code, out, errOut)
			}
			// A sub-agent's lines say less of its calls: its write is not
			// there, and it ends done.
			if code != exitDone || !tc.sub && !strings.Contains(out+errOut, "denied") {
				t.Fatalf("cairn %s: exit %d\n%s%s\nwant it done, the write denied", strings.Join(append(args, agent), " "), code, out, errOut)
			}
		})
	}
}

// An edit of the step agent's file that asks for more than its parent
// file has is refused by `cairn resume --upgrade`, as the workflow would
// have refused it, and nothing runs.
func TestWorkflowDelegationStepUpgradeIsCheckedAgainstItsParent(t *testing.T) {
	dir := stepParentFiles(t, false)
	writeIn(t, dir, "lead.yaml", "name: lead\nmodel: {provider: script}\ntools: [{module: builtin, only: [write_file]}]\n"+
		"approvals: [{tool: write_file, action: deny}]\nagents: [{name: alpha, file: alpha.yaml}]\n")
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitPaused {
		t.Fatalf("workflow run: exit %d, %s", code, errOut)
	}
	writeIn(t, dir, "alpha.yaml", "name: alpha\nmodel: {provider: script, script: alpha-script.yaml}\n"+
		"tools: [{module: builtin, only: [write_file, delete_file]}]\nlimits: {max_rounds: 1}\n")
	code, out, errOut := cairn(t, append([]string{"resume", "--upgrade", "--max-rounds", "5", "w.one"}, flags...)...)
	if code == exitDone || !strings.Contains(errOut, "delete_file") || !strings.Contains(errOut, "parent's grant") {
		t.Fatalf("resume --upgrade of a widened step agent: exit %d\n%s%s\nwant it refused, naming delete_file and the parent's grant", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws", "b.txt")); err == nil {
		t.Fatal("the refused upgrade wrote b.txt")
	}
}

// A delegation step's agent that a cairn which did not keep its parent
// file made (its definition journaled without it) is not run by itself,
// nor is a sub-agent under it: the error says that the workflow's resume
// continues it, which binds it by the parent file's rules; that resume
// goes on under them.
func TestWorkflowDelegationStepWithoutItsParentKeptIsRefusedAlone(t *testing.T) {
	for _, sub := range []bool{false, true} {
		t.Run(map[bool]string{false: "the step's agent", true: "a sub-agent of the step's agent"}[sub], func(t *testing.T) {
			dir, store, flags, agent := pausedStepWorkflow(t, sub)
			forgetAbove(t, store, "w.one")
			code, out, errOut := cairn(t, append([]string{"resume", "--max-rounds", "5", agent}, flags...)...)
			if _, err := os.Stat(filepath.Join(dir, "ws", "b.txt")); err == nil {
				t.Fatalf("resume %s: exit %d\n%s%s\nit wrote b.txt, which the parent file lead.yaml denies", agent, code, out, errOut)
			}
			if code != exitFailed || !strings.Contains(errOut, "lead.yaml") || !strings.Contains(errOut, "`cairn workflow resume w`") {
				t.Fatalf("resume %s: exit %d\n%s%s\nwant it refused, naming lead.yaml and `cairn workflow resume w`", agent, code, out, errOut)
			}
			if sub {
				return // its limit is its own, which the workflow's resume does not raise
			}
			code, out, errOut = cairn(t, append([]string{"workflow", "resume", "--max-rounds", "5", "w"}, flags...)...)
			if _, err := os.Stat(filepath.Join(dir, "ws", "b.txt")); err == nil || code != exitDone {
				t.Fatalf("workflow resume: exit %d\n%s%s\nwant it done, b.txt denied (%v)", code, out, errOut, err)
			}
		})
	}
}

// pausedStepWorkflow runs workflow w of stepParentFiles(t, sub) in a new
// store until it pauses, and returns the files' directory, the store, the
// flags that name it, and the agent under test: the delegation step's,
// w.one, or with sub, its sub-agent beta.
func pausedStepWorkflow(t *testing.T, sub bool) (dir, store string, flags []string, agent string) {
	t.Helper()
	dir = stepParentFiles(t, sub)
	store = t.TempDir()
	flags = []string{"--store", store, "--cache", cacheForTests(t)}
	if code, _, errOut := cairn(t, append([]string{"workflow", "run", "--id", "w", filepath.Join(dir, "flow.yaml")}, flags...)...); code != exitPaused {
		t.Fatalf("workflow run: exit %d, %s", code, errOut)
	}
	agent = "w.one"
	for id := range lsStatusOf(t, store) {
		if sub && strings.HasPrefix(id, "w.one.beta-") {
			agent = id
		}
	}
	return dir, store, flags, agent
}

// forgetAbove journals agent's definition without the agent files above
// it, as a cairn that did not keep them wrote it.
func forgetAbove(t *testing.T, dir, agent string) {
	t.Helper()
	s, err := host.OpenStore(dir)
	must(t, err)
	rec, log, err := s.Open(agent)
	must(t, err)
	def := rec.State.Definition
	if len(def.Above) == 0 {
		t.Fatalf("agent %s keeps no agent file above it", agent)
	}
	def.Above = nil
	must(t, log.Append(checkpoint.Record{Type: checkpoint.RecDefine, Definition: &def}))
	must(t, log.Close())
}

// Regression: `cairn resume --strategy manual` of a delegation step's
// agent that a cairn which did not keep its parent file made, or of a
// sub-agent under it, was refused as a resume that would run it by itself
// was, though manual only reports and runs nothing. It reports, says that
// the workflow's resume goes on, not the agent's own, and the store is as
// it was.
func TestManualResumeOfAStepAgentWithoutItsParentKeptReports(t *testing.T) {
	for _, sub := range []bool{false, true} {
		t.Run(map[bool]string{false: "the step's agent", true: "a sub-agent of the step's agent"}[sub], func(t *testing.T) {
			_, store, flags, agent := pausedStepWorkflow(t, sub)
			forgetAbove(t, store, "w.one")
			before := dirBytes(t, store)
			code, out, errOut := cairn(t, append([]string{"resume", "--strategy", "manual", agent}, flags...)...)
			if code != exitPaused || !strings.Contains(out, "from the boundary after round 1") ||
				!strings.Contains(errOut, "manual: reported, nothing changed; a resume that runs it is refused") ||
				!strings.Contains(errOut, "`cairn workflow resume w` continues it under them") || strings.Contains(errOut, "continue with `cairn resume") {
				t.Fatalf("resume --strategy manual %s: exit %d\n%s%s\nwant its report, and that `cairn workflow resume w`, not its own, goes on", agent, code, out, errOut)
			}
			if dirBytes(t, store) != before {
				t.Fatalf("resume --strategy manual %s changed the store", agent)
			}
		})
	}
}

// Regression: a fork of a delegation step's agent that a cairn which did
// not keep its parent file made copied its definition, which keeps no
// parent file, and ran as an agent of its own: the parent file's approval
// rules bound it no more, and it wrote what they deny. Such a fork, and
// one of a sub-agent under it, is refused, the error naming the parent
// file and what goes on; nothing of it is made. A step's agent that keeps
// its parent file forks, and its fork is bound by the file.
func TestForkOfAStepAgentWithoutItsParentKeptIsRefused(t *testing.T) {
	for _, sub := range []bool{false, true} {
		t.Run(map[bool]string{false: "the step's agent", true: "a sub-agent of the step's agent"}[sub], func(t *testing.T) {
			dir, store, flags, agent := pausedStepWorkflow(t, sub)
			if code, out, errOut := cairn(t, append([]string{"fork", "--as", "kept", agent}, flags...)...); code != exitDone {
				t.Fatalf("fork of %s, which keeps its parent file: exit %d\n%s%s", agent, code, out, errOut)
			}
			forgetAbove(t, store, "w.one")
			code, out, errOut := cairn(t, append([]string{"fork", "--as", "f", agent}, flags...)...)
			if code == exitDone {
				code, rout, rerr := cairn(t, append([]string{"resume", "--max-rounds", "5", "f"}, flags...)...)
				_, err := os.Stat(filepath.Join(dir, "ws-f", "b.txt"))
				t.Fatalf("fork of %s was made:\n%s%s\nits resume: exit %d, b.txt, which lead.yaml denies, written: %v\n%s%s",
					agent, out, errOut, code, err == nil, rout, rerr)
			}
			if !strings.Contains(errOut, "lead.yaml") || !strings.Contains(errOut, "`cairn workflow resume w`") ||
				!strings.Contains(errOut, "`cairn workflow run --id NEW "+filepath.Join(dir, "flow.yaml")+"`") {
				t.Fatalf("fork of %s: exit %d\n%s%s\nwant it refused, naming lead.yaml, `cairn workflow resume w` and the workflow's run anew", agent, code, out, errOut)
			}
			if _, ok := lsStatusOf(t, store)["f"]; ok {
				t.Fatal("the refused fork left an agent f")
			}
			if _, err := os.Stat(filepath.Join(dir, "ws-f")); err == nil {
				t.Fatal("the refused fork left its workspace")
			}
			// The fork made while the parent file was kept keeps it.
			cairn(t, append([]string{"resume", "--auto-deny", "--max-rounds", "5", "kept"}, flags...)...)
			if _, err := os.Stat(filepath.Join(dir, "ws-kept", "b.txt")); err == nil {
				t.Fatal("the fork of a step agent that keeps its parent file wrote b.txt, which lead.yaml denies")
			}
		})
	}
}
