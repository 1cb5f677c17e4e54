package workflow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/guestbuild"
)

// Regression: a template where a tool's input schema takes no text was
// refused before any step ran when the schema said so by its type, but
// not when it said so by anyOf or oneOf ({"anyOf": [{"type": "integer"},
// {"type": "boolean"}]}): a stand-in number passed it, the step before
// ran, and the workflow failed at the call. A template passes an anyOf or
// a oneOf when one of its branches takes text, at any depth (under a
// property, an item or a $ref), and is refused before any step runs when
// none does.
func TestToolStepTemplateCheckedAgainstAnyOfAndOneOf(t *testing.T) {
	for _, tc := range []struct {
		name, schema, input string
		refused             bool
	}{
		{"anyOf of no text", `{"anyOf":[{"type":"integer"},{"type":"boolean"}]}`, `{n: "{{steps.one.output}}"}`, true},
		{"oneOf of no text", `{"oneOf":[{"type":"integer"},{"type":"null"}]}`, `{n: "{{steps.one.output}}"}`, true},
		{"anyOf with a text branch", `{"anyOf":[{"type":"integer"},{"type":"string","enum":["3"]}]}`, `{n: "{{steps.one.output}}"}`, false},
		{"oneOf with a text branch", `{"oneOf":[{"type":"integer"},{"type":"string"}]}`, `{n: "{{steps.one.output}}"}`, false},
		{"anyOf in an item", `{"type":"array","items":{"anyOf":[{"type":"integer"},{"type":"number"}]}}`, `{n: [1, "{{steps.one.output}}"]}`, true},
		{"oneOf through a $ref", `{"$ref":"#/$defs/num"}`, `{n: "{{steps.one.output}}"}`, true},
		{"anyOf under allOf", `{"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]},{"type":"integer"}]}`, `{n: "{{steps.one.output}}"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := flowDir(t, map[string]string{"ws/": "", "flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
				"  - {name: one, tool: write_file, module: builtin, grant: {workspace: rw}, input: {path: out.txt, content: \"3\"}}\n" +
				"  - {name: two, needs: [one], tool: echo, module: hostile.wasm, input: " + tc.input + "}\n"})
			store := checkpoint.NewMemStore()
			eng := engine(t, store)
			schema := `{"type":"object","properties":{"n":` + tc.schema + `},"required":["n"],"additionalProperties":false,` +
				`"$defs":{"num":{"oneOf":[{"type":"integer"},{"type":"number"}]}}}`
			manifest := `{"abi": 1, "tools": [{"name": "echo", "description": "Echoes.", "input_schema": ` + quote(schema) + `}]}`
			_, err := guestbuild.Build(dir, "../testdata/hostile", func(w []byte) ([]byte, error) { return eng.Pack(context.Background(), w, []byte(manifest)) })
			must(t, err)
			f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
			must(t, err)
			_, err = workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf"})
			if !tc.refused {
				if errors.Is(err, workflow.ErrFlow) {
					t.Fatalf("refused %v; a branch takes text, so the template is left to the call", err)
				}
				return
			}
			if !errors.Is(err, workflow.ErrFlow) || !strings.Contains(err.Error(), "step two: ") || !strings.Contains(err.Error(), `"{{steps.one.output}}"`) {
				t.Fatalf("got %v; want the template refused before any step runs, naming step two and the template", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "ws", "out.txt")); !os.IsNotExist(err) {
				t.Errorf("step one ran and wrote out.txt (stat: %v)", err)
			}
		})
	}
}

// quote is s as a JSON string.
func quote(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
