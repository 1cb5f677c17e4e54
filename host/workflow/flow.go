package workflow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"

	"go.yaml.in/yaml/v3"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/yamlkeys"
)

// Flow is a workflow file.
//
//	name: report
//	workspace: workspace        # every step's, unless the step names its own
//	max_parallel: 2             # steps run at once (default DefaultParallel)
//	steps:
//	  - name: gather
//	    agent: gatherer.yaml
//	    prompt: List the open questions in notes.md.
//	  - name: count
//	    tool: textstats
//	    module: ../tools/textstats/textstats.wasm
//	    grant: {workspace: ro}
//	    input: {path: notes.md}
//	  - name: review
//	    needs: [gather, count]
//	    delegate: reviewer          # a sub-agent that team.yaml declares
//	    parent: team.yaml
//	    task: "Check these: {{steps.gather.output}} ({{steps.count.output}})"
type Flow struct {
	Name        string `yaml:"name"`
	Workspace   string `yaml:"workspace"`
	MaxParallel int    `yaml:"max_parallel"`
	Steps       []Step `yaml:"steps"`

	// Dir is what relative paths are resolved against; Source the file's
	// bytes. They are not part of the YAML.
	Dir    string `yaml:"-"`
	Source []byte `yaml:"-"`
}

// Step is one step of a flow: exactly one of Agent, Delegate and Tool.
type Step struct {
	Name  string   `yaml:"name"`
	Needs []string `yaml:"needs"`
	// Agent is an agent file, run with Prompt.
	Agent  string `yaml:"agent"`
	Prompt string `yaml:"prompt"`
	// Delegate names a sub-agent that the agent file Parent declares
	// under agents:, given Task.
	Delegate string `yaml:"delegate"`
	Parent   string `yaml:"parent"`
	Task     string `yaml:"task"`
	// Tool is the name of a tool of Module (host.BuiltinModule or a .wasm
	// path), called once with Input under Grant.
	Tool   string      `yaml:"tool"`
	Module string      `yaml:"module"`
	Input  any         `yaml:"input"`
	Grant  *host.Grant `yaml:"grant"`
	// Workspace overrides the flow's workspace for this step.
	Workspace string `yaml:"workspace"`
}

// DefaultParallel is how many steps run at once when the flow and the
// caller set no limit.
const DefaultParallel = 4

// Kind is what a step does: "agent", "delegate" or "tool".
func (s Step) Kind() string {
	switch {
	case s.Delegate != "":
		return "delegate"
	case s.Tool != "":
		return "tool"
	}
	return "agent"
}

var (
	stepName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)
	// stepRef is the one template form: {{steps.NAME.output}}.
	stepRef = regexp.MustCompile(`\{\{\s*steps\.([A-Za-z0-9_-]+)\.output\s*\}\}`)
)

// ErrFlow: a workflow file is not valid, or names for a step a file that
// is not there or not valid (Run and Resume check them before they change
// anything). The error says which step and what to change.
var ErrFlow = errors.New("invalid workflow file")

// Parse reads a workflow file; dir is what its relative paths are
// resolved against. Unknown keys are errors.
//
// # Errors
//
// The YAML's own errors (with line numbers), and ErrFlow for a flow that
// names no steps, a step without a name or of two kinds, a need that is
// not a step, a cycle, or a template that names a step not among the
// step's needs.
func Parse(data []byte, dir string) (*Flow, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	f := &Flow{Dir: dir, Source: data}
	if err := dec.Decode(f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is empty", ErrFlow)
		}
		return nil, yamlkeys.Friendly(err, reflect.TypeOf(f))
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// Load reads and validates the workflow file at path.
func Load(path string) (*Flow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow file: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("read workflow file: %w", err)
	}
	f, err := Parse(data, dir)
	if err != nil {
		return nil, fmt.Errorf("workflow file %s: %w", path, err)
	}
	return f, nil
}

// Path resolves p against the flow's directory.
func (f *Flow) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir, p)
}

// step returns the step of that name.
func (f *Flow) step(name string) (Step, bool) {
	for _, s := range f.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return Step{}, false
}

func (f *Flow) validate() error {
	if f.Name == "" || !stepName.MatchString(f.Name) {
		return fmt.Errorf("%w: name %q: want 1 to 40 of letters, digits, '_' and '-'", ErrFlow, f.Name)
	}
	if len(f.Steps) == 0 {
		return fmt.Errorf("%w: steps is empty: list at least one step", ErrFlow)
	}
	if f.MaxParallel < 0 {
		return fmt.Errorf("%w: max_parallel cannot be negative", ErrFlow)
	}
	seen := map[string]bool{}
	for i, s := range f.Steps {
		if err := s.validate(); err != nil {
			return fmt.Errorf("%w: steps[%d]: %w", ErrFlow, i, err)
		}
		if seen[s.Name] {
			return fmt.Errorf("%w: steps[%d]: a second step named %q", ErrFlow, i, s.Name)
		}
		seen[s.Name] = true
	}
	for _, s := range f.Steps {
		if err := f.checkNeeds(s); err != nil {
			return fmt.Errorf("%w: step %s: %w", ErrFlow, s.Name, err)
		}
	}
	return f.checkCycles()
}

func (s Step) validate() error {
	if !stepName.MatchString(s.Name) {
		return fmt.Errorf("name %q: want 1 to 40 of letters, digits, '_' and '-'", s.Name)
	}
	kinds := 0
	for _, k := range []string{s.Agent, s.Delegate, s.Tool} {
		if k != "" {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("step %s: give exactly one of agent: (with prompt:), delegate: (with parent: and task:) and tool: (with module: and input:)", s.Name)
	}
	switch {
	case s.Agent != "" && s.Prompt == "":
		return fmt.Errorf("step %s: an agent step needs a prompt (prompt: TEXT)", s.Name)
	case s.Delegate != "" && (s.Task == "" || s.Parent == ""):
		return fmt.Errorf("step %s: delegate: needs a task: and a parent: (the agent file that declares the sub-agent)", s.Name)
	case s.Delegate == "" && s.Parent != "":
		return fmt.Errorf("step %s: parent: belongs to a delegate: step", s.Name)
	case s.Tool != "" && s.Module == "":
		return fmt.Errorf("step %s: tool: needs a module: (builtin or a .wasm file)", s.Name)
	case s.Tool == "" && (s.Module != "" || s.Input != nil || s.Grant != nil):
		return fmt.Errorf("step %s: module:, input: and grant: belong to a tool: step", s.Name)
	}
	return nil
}

// checkNeeds refuses a need that is no step, and a template that names a
// step the step does not need (its output would not be there yet).
func (f *Flow) checkNeeds(s Step) error {
	needs := map[string]bool{}
	for _, n := range s.Needs {
		if _, ok := f.step(n); !ok || n == s.Name {
			return fmt.Errorf("needs %q, which is not another step of the flow", n)
		}
		needs[n] = true
	}
	for _, text := range s.templated() {
		for _, m := range stepRef.FindAllStringSubmatch(text, -1) {
			if !needs[m[1]] {
				return fmt.Errorf("uses {{steps.%s.output}}: add %s to its needs (needs: [%s])", m[1], m[1], m[1])
			}
		}
	}
	return nil
}

// checkCycles refuses steps that need each other, directly or not.
func (f *Flow) checkCycles() error {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		switch state[name] {
		case 1:
			return fmt.Errorf("%w: the steps %v need each other: break the cycle", ErrFlow, append(path, name))
		case 2:
			return nil
		}
		state[name] = 1
		s, _ := f.step(name)
		for _, n := range s.Needs {
			if err := visit(n, append(path, name)); err != nil {
				return err
			}
		}
		state[name] = 2
		return nil
	}
	for _, s := range f.Steps {
		if err := visit(s.Name, nil); err != nil {
			return err
		}
	}
	return nil
}
