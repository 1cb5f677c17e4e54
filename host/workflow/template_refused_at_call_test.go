package workflow_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/workflow"
	"github.com/cairnrun/cairn/internal/guestbuild"
)

// Regression: a tool step whose template expanded to text its tool's input
// schema refuses (not one of an enum's words) failed at the call with the
// tool's words alone ("echo: invalid arguments: ... at /text: enum: ..."),
// naming neither the template nor where it came from, and said to fix it
// and resume, where a resume, which keeps the workflow file and the
// outputs, failed the same way. The step fails before its agent is made,
// naming the place, the template and the step whose output it gave, and
// says that the workflow file is the cause.
func TestToolStepTemplateTextRefusedNamesStepFieldAndTemplate(t *testing.T) {
	dir := flowDir(t, map[string]string{"ws/": "", "flow.yaml": "name: f\nworkspace: ws\nsteps:\n" +
		"  - {name: one, tool: write_file, module: builtin, grant: {workspace: rw}, input: {path: out.txt, content: blue}}\n" +
		"  - {name: two, needs: [one], tool: echo, module: hostile.wasm, input: {text: \"{{steps.one.output}}\", n: 1}}\n"})
	store, err := checkpoint.OpenFileStore(filepath.Join(t.TempDir(), "store"))
	must(t, err)
	eng := engine(t, store)
	manifest := `{"abi": 1, "tools": [{"name": "echo", "description": "Echoes a colour.", "input_schema": ` +
		`"{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"enum\":[\"red\",\"green\"]},\"n\":{\"type\":\"integer\"}},` +
		`\"required\":[\"text\",\"n\"],\"additionalProperties\":false}"}]}`
	_, err = guestbuild.Build(dir, "../testdata/hostile", func(w []byte) ([]byte, error) { return eng.Pack(context.Background(), w, []byte(manifest)) })
	must(t, err)
	f, err := workflow.Load(filepath.Join(dir, "flow.yaml"))
	must(t, err)
	res, err := workflow.Run(context.Background(), eng, f, workflow.Options{ID: "wf"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != checkpoint.StatusFailed || res.Stop == nil || !res.Stop.InFlow {
		t.Fatalf("result %+v, stop %+v; want failed, its cause in the workflow file", res, res.Stop)
	}
	for _, want := range []string{"at /text", `"{{steps.one.output}}"`, "step one's output", "enum"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("reason %q; want it to say %q", res.Reason, want)
		}
	}
	if _, err := store.Read("wf.two"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("the step's agent was made (read: %v); its input was refused before", err)
	}
}
