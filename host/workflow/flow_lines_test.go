package workflow_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host/workflow"
)

// Regression: a workflow file's structural errors named no line ("the
// steps [a c b a] need each other", `needs "zz", which is not another
// step`, `steps[1]: a second step named "a"`), {{steps.nope.output}} was
// told to add nope to its needs though nope is no step, and a mistyped
// {{steps.a.outputs}} passed into the prompt as text. Each error names the
// line to change and says what is wrong; a template that is not
// {{steps.NAME.output}} is refused.
func TestFlowStructureErrorsNameTheirLine(t *testing.T) {
	const head = "name: f\nworkspace: ws\nsteps:\n"
	for _, tc := range []struct {
		name, steps string
		want        []string
		not         string
	}{
		{"cycle", "  - name: a\n    needs: [c]\n    agent: x.yaml\n    prompt: p\n" +
			"  - name: b\n    needs: [a]\n    agent: x.yaml\n    prompt: p\n" +
			"  - name: c\n    needs: [b]\n    agent: x.yaml\n    prompt: p\n",
			[]string{"line 5: ", "the steps a, c, b need each other (a needs c, c needs b, b needs a)"}, "[a c b a]"},
		{"needs itself", "  - name: a\n    needs: [a]\n    agent: x.yaml\n    prompt: p\n",
			[]string{"line 5: step a: needs itself"}, ""},
		{"needs no step", "  - name: a\n    agent: x.yaml\n    prompt: p\n  - name: b\n    needs: [a, zz]\n    agent: x.yaml\n    prompt: p\n",
			[]string{`line 8: step b: needs "zz", which is not another step of the flow (the others: a)`}, ""},
		{"second step of a name", "  - name: a\n    agent: x.yaml\n    prompt: p\n  - name: a\n    agent: y.yaml\n    prompt: p\n",
			[]string{`line 7: steps[1]: a second step named "a" (line 4 has the first)`}, ""},
		{"template of a step not needed", "  - name: a\n    agent: x.yaml\n    prompt: p\n  - name: b\n    agent: x.yaml\n    prompt: \"x {{steps.a.output}}\"\n",
			[]string{"line 9: step b: uses {{steps.a.output}}: add a to its needs (needs: [a])"}, ""},
		{"template of no step", "  - name: a\n    agent: x.yaml\n    prompt: p\n  - name: c\n    needs: [a]\n    agent: x.yaml\n    prompt: \"x {{steps.nope.output}}\"\n",
			[]string{"line 10: step c: uses {{steps.nope.output}}, and nope is not a step of the flow (the others: a)"}, "add nope"},
		{"template of no field", "  - name: a\n    tool: read_file\n    module: builtin\n    input: {path: notes.md}\n" +
			"  - name: c\n    needs: [a]\n    tool: write_file\n    module: builtin\n    input: {path: out.txt, content: \"B={{steps.a.outputs}}\"}\n",
			[]string{"line 12: step c: uses {{steps.a.outputs}}, which is no template: the one form is {{steps.NAME.output}}"}, ""},
		{"template of a step's own output", "  - name: a\n    agent: x.yaml\n    prompt: \"{{ steps.a.output }}\"\n",
			[]string{"line 6: step a: uses {{ steps.a.output }}, its own output"}, ""},
	} {
		_, err := workflow.Parse([]byte(head+tc.steps), t.TempDir())
		if !errors.Is(err, workflow.ErrFlow) {
			t.Errorf("%s: %v, want ErrFlow", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to say %q", tc.name, err, w)
			}
		}
		if tc.not != "" && strings.Contains(err.Error(), tc.not) {
			t.Errorf("%s: %v\nsays %q", tc.name, err, tc.not)
		}
	}
	// The one form, spaced or not, is still read.
	if _, err := workflow.Parse([]byte(head+"  - name: a\n    agent: x.yaml\n    prompt: p\n"+
		"  - name: b\n    needs: [a]\n    agent: x.yaml\n    prompt: \"{{ steps.a.output }} {{steps.a.output}}\"\n"), t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// Regression: the errors of a workflow file's own keys (a name that is no
// name, an empty steps:, a negative max_parallel) named no line, where the
// errors of its steps do; and a second YAML document after the first
// (---) was left out without a word, so the steps in it never ran.
func TestFlowKeyErrorsNameTheirLine(t *testing.T) {
	const step = "  - {name: a, agent: x.yaml, prompt: p}\n"
	for _, tc := range []struct{ name, file, want string }{
		{"name", "workspace: ws\nname: a/b\nsteps:\n" + step, `line 2: name "a/b": want`},
		{"steps empty", "name: f\n\nsteps: []\n", "line 3: steps is empty"},
		{"max_parallel", "name: f\nmax_parallel: -1\nsteps:\n" + step, "line 2: max_parallel cannot be negative"},
		{"second document", "name: f\nsteps:\n" + step + "---\nname: g\nsteps:\n  - {name: b, agent: x.yaml, prompt: p}\n",
			"line 4: a second YAML document"},
		{"--- at the start", "---\nname: f\nsteps:\n" + step, ""},
		{"--- at the end", "name: f\nsteps:\n" + step + "---\n# nothing more\n", ""},
	} {
		path := filepath.Join(t.TempDir(), "flow.yaml")
		if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := workflow.Load(path)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v; want it read", tc.name, err)
			}
			continue
		}
		if !errors.Is(err, workflow.ErrFlow) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v; want ErrFlow with %q", tc.name, err, tc.want)
		}
	}
}
