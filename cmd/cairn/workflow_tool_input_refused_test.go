package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a workflow's tool step whose input: did not match its tool's
// input schema passed the check made before the workflow starts, so the
// steps before it ran, wrote the workspace and were stored, and the
// workflow then failed (exit 1) at that step, whose input a resume could
// not fix. It is refused before anything runs (exit 2), naming the
// workflow file, the line of the step's input: and what is wrong, for
// each kind of literal mistake; a template's value is left to the call.
func TestWorkflowToolStepInputNotMatchingItsSchemaRefusedBeforeAnyStep(t *testing.T) {
	first := "  - {name: one, tool: write_file, module: builtin, grant: {workspace: rw}, input: {path: out.txt, content: hello}}\n"
	for _, tc := range []struct{ name, input, want string }{
		{"unknown key", "{path: notes.md, lines: 3}", `unexpected additional properties ["lines"]`},
		{"missing required key", "{offset: 1}", `required: missing properties: ["path"]`},
		{"literal of the wrong type", "{path: notes.md, limit: many}", `type: many has type "string", want "integer"`},
		{"unknown key beside a template", `{path: "{{steps.one.output}}", lines: 3}`, `unexpected additional properties ["lines"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := flowFiles(t, map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n" + first +
				"  - name: two\n    needs: [one]\n    tool: read_file\n    module: builtin\n    input: " + tc.input + "\n"})
			store := t.TempDir()
			flow := filepath.Join(dir, "flow.yaml")
			code, _, errOut := cairnProcess(t, "workflow", "run", "--id", "wf", "--store", store, "--cache", cacheForTests(t), flow)
			for _, want := range []string{"workflow file " + flow, "line 9: step two: ", tc.want, "fix the step's input: in the workflow file"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q; want it to say %q", errOut, want)
				}
			}
			if code != exitUsage {
				t.Errorf("exit %d; want %d", code, exitUsage)
			}
			if got := storedFiles(t, store); len(got) != 0 {
				t.Errorf("the refused workflow stored %v", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "ws", "out.txt")); !os.IsNotExist(err) {
				t.Errorf("the first step ran and wrote out.txt (stat: %v)", err)
			}
		})
	}
}

// A tool step's input whose strings hold templates is checked for what is
// literal only, and that a template's value, text, may be where it is: a
// template where the schema wants a string is left to the call, and the
// workflow starts.
func TestWorkflowToolStepInputTemplatesLeftToTheCall(t *testing.T) {
	dir := flowFiles(t, map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
		"  - {name: one, tool: write_file, module: builtin, grant: {workspace: rw}, input: {path: out.txt, content: notes.md}}\n" +
		"  - {name: two, needs: [one], tool: read_file, module: builtin, input: {path: \"{{steps.one.output}}\", limit: 3}}\n"})
	store := t.TempDir()
	code, _, errOut := cairnProcess(t, "workflow", "run", "--id", "wf", "--store", store, "--cache", cacheForTests(t), filepath.Join(dir, "flow.yaml"))
	if strings.Contains(errOut, "input of tool") || code == exitUsage {
		t.Fatalf("exit %d, %s; want the templated input left to the call", code, errOut)
	}
}

// Regression: a template where a tool's input schema takes no string
// (read_file's limit, an integer) passed the check, since its value was
// known only at the call; the step before it ran and wrote the workspace,
// and the workflow failed at the call, saying to resume, which failed the
// same way. A template's value is text, whatever it is: it is refused
// before any step runs (exit 2), naming the step's line, the place and
// the template.
func TestWorkflowToolStepTemplateWhereNoTextIsTakenRefusedBeforeAnyStep(t *testing.T) {
	dir := flowFiles(t, map[string]string{"flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
		"  - {name: one, tool: write_file, module: builtin, grant: {workspace: rw}, input: {path: out.txt, content: \"3\"}}\n" +
		"  - {name: two, needs: [one], tool: read_file, module: builtin, input: {path: notes.md, limit: \"{{steps.one.output}}\"}}\n"})
	store := t.TempDir()
	flow := filepath.Join(dir, "flow.yaml")
	code, _, errOut := cairnProcess(t, "workflow", "run", "--id", "wf", "--store", store, "--cache", cacheForTests(t), flow)
	for _, want := range []string{"line 5: step two: ", "at /limit", `"{{steps.one.output}}"`, `want "integer"`, "fix the step's input: in the workflow file"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q; want it to say %q", errOut, want)
		}
	}
	if code != exitUsage {
		t.Errorf("exit %d; want %d", code, exitUsage)
	}
	if got := storedFiles(t, store); len(got) != 0 {
		t.Errorf("the refused workflow stored %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "ws", "out.txt")); !os.IsNotExist(err) {
		t.Errorf("the first step ran and wrote out.txt (stat: %v)", err)
	}
}
