package workflow

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

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
	// bytes; File the file's absolute path, empty for a flow not loaded
	// from a file (Parse). They are not part of the YAML.
	Dir    string `yaml:"-"`
	Source []byte `yaml:"-"`
	File   string `yaml:"-"`

	// lines are the lines of the values of the file's own keys; none for
	// a flow not parsed from YAML text.
	lines map[string]int
}

// at is "line N: " for the line of the value of the flow's key, or empty
// when it is not known.
func (f *Flow) at(key string) string {
	if n := f.lines[key]; n > 0 {
		return fmt.Sprintf("line %d: ", n)
	}
	return ""
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
	// Tool is the name of a tool of Module (a module built into cairn,
	// host.BuiltinModule or host.FetchModule, or a .wasm path), called
	// once with Input under Grant.
	Tool   string      `yaml:"tool"`
	Module string      `yaml:"module"`
	Input  any         `yaml:"input"`
	Grant  *host.Grant `yaml:"grant"`
	// Workspace overrides the flow's workspace for this step.
	Workspace string `yaml:"workspace"`

	// lines are where the step is in the workflow file: the line of the
	// step itself (key ""), and of the values of its keys; none for a
	// flow not parsed from YAML text.
	lines map[string]int
}

// at is "line N: " for the line of the step's key (its own line for ""),
// or empty when it is not known.
func (s Step) at(key string) string {
	n := s.lines[key]
	if n == 0 {
		n = s.lines[""]
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("line %d: ", n)
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
	// anyRef is whatever looks meant as a template of a step: anything
	// but stepRef is refused, not passed on as text.
	anyRef = regexp.MustCompile(`\{\{\s*steps\b[^}]*\}\}`)
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
// The YAML's own errors (with line numbers), and ErrFlow for a flow
// without a valid name, one that names no steps, a step without a name or of two kinds, two steps of one
// name, a need that is not a step, a cycle, a template that is not
// {{steps.NAME.output}}, or one that names no step, or a step not among the
// step's needs; each of these names the line of the file to change.
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
	f.findLines(data)
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
}

// oneDocument refuses a file with a YAML document after the first, which
// Parse would leave out. Load checks it, not Parse: a workflow a cairn
// that did not check it stored is resumed as it started.
func oneDocument(data []byte) error {
	n, found := yamlkeys.SecondDocument(data)
	if !found {
		return nil
	}
	line := ""
	if n > 0 {
		line = fmt.Sprintf("line %d: ", n)
	}
	return fmt.Errorf("%w: %sa second YAML document (after ---), which would be left out: a workflow file is one document; "+
		"put its steps in the first one's list of steps", ErrFlow, line)
}

// wholeNumbers refuses a number that is not whole for a key that takes a
// whole number, which Parse would cut to its whole part (max_parallel:
// 1.5 would be 1). Load checks it, not Parse, as it does oneDocument.
func wholeNumbers(data []byte) error {
	if err := yamlkeys.WholeNumbers(data, reflect.TypeFor[Flow]()); err != nil {
		return fmt.Errorf("%w: %w", ErrFlow, err)
	}
	return nil
}

// Load reads and validates the workflow file at path, which must be one
// YAML document (ErrFlow for a second one) with whole numbers where they
// are wanted (ErrFlow for 1.5).
func Load(path string) (*Flow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow file: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("read workflow file: %w", err)
	}
	err = wholeNumbers(data)
	var f *Flow
	if err == nil {
		f, err = Parse(data, dir)
	}
	if err == nil {
		err = oneDocument(data)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow file %s: %w", path, err)
	}
	f.File = filepath.Join(dir, filepath.Base(path))
	return f, nil
}

// Path resolves p against the flow's directory.
func (f *Flow) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir, p)
}

// findLines gives each step the lines of its node and of its keys' values
// in data, the YAML it was decoded from.
func (f *Flow) findLines(data []byte) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	if top := doc.Content[0]; top.Kind == yaml.MappingNode {
		f.lines = map[string]int{}
		for k := 0; k+1 < len(top.Content); k += 2 {
			f.lines[top.Content[k].Value] = top.Content[k+1].Line
		}
	}
	steps := valueOf(doc.Content[0], "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode || len(steps.Content) != len(f.Steps) {
		return
	}
	for i, n := range steps.Content {
		lines := map[string]int{"": n.Line}
		if n.Kind == yaml.MappingNode {
			for k := 0; k+1 < len(n.Content); k += 2 {
				lines[n.Content[k].Value] = n.Content[k+1].Line
			}
		}
		f.Steps[i].lines = lines
	}
}

// valueOf is the value of key in the mapping node m, or nil.
func valueOf(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for k := 0; k+1 < len(m.Content); k += 2 {
		if m.Content[k].Value == key {
			return m.Content[k+1]
		}
	}
	return nil
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
		return fmt.Errorf("%w: %sname %q: want 1 to 40 of letters, digits, '_' and '-'", ErrFlow, f.at("name"), f.Name)
	}
	if len(f.Steps) == 0 {
		return fmt.Errorf("%w: %ssteps is empty: list at least one step", ErrFlow, f.at("steps"))
	}
	if f.MaxParallel < 0 {
		return fmt.Errorf("%w: %smax_parallel cannot be negative", ErrFlow, f.at("max_parallel"))
	}
	seen := map[string]Step{}
	for i, s := range f.Steps {
		if err := s.validate(); err != nil {
			return fmt.Errorf("%w: %ssteps[%d]: %w", ErrFlow, s.at(""), i, err)
		}
		if first, ok := seen[s.Name]; ok {
			return fmt.Errorf("%w: %ssteps[%d]: a second step named %q (%s): give each step a name of its own",
				ErrFlow, s.at(""), i, s.Name, strings.TrimSuffix(cmp.Or(first.at(""), "line ?: "), ": ")+" has the first")
		}
		seen[s.Name] = s
	}
	for _, s := range f.Steps {
		if err := f.checkNeeds(s); err != nil {
			return fmt.Errorf("%w: %sstep %s: %w", ErrFlow, s.at(err.key), s.Name, err)
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
		return fmt.Errorf("step %s: tool: needs a module: (builtin, fetch or a .wasm file)", s.Name)
	case s.Tool == "" && (s.Module != "" || s.Input != nil || s.Grant != nil):
		return fmt.Errorf("step %s: module:, input: and grant: belong to a tool: step", s.Name)
	}
	return nil
}

// needsError is what is wrong with a step's needs or templates, and the
// key whose value has it.
type needsError struct {
	key, why string
}

func (e *needsError) Error() string { return e.why }

// checkNeeds refuses a need that is no step, a template that is not
// {{steps.NAME.output}}, one that names no step, and one that names a step
// the step does not need (its output would not be there yet).
func (f *Flow) checkNeeds(s Step) *needsError {
	needs := map[string]bool{}
	for _, n := range s.Needs {
		if n == s.Name {
			return &needsError{"needs", fmt.Sprintf("needs itself: take %s out of its needs", n)}
		}
		if _, ok := f.step(n); !ok {
			return &needsError{"needs", fmt.Sprintf("needs %q, which is not another step of the flow (the others: %s)", n, f.names(s.Name))}
		}
		needs[n] = true
	}
	for _, t := range s.templated() {
		key, text := t[0], t[1]
		for _, ref := range anyRef.FindAllString(text, -1) {
			m := stepRef.FindStringSubmatch(ref)
			switch {
			case m == nil:
				return &needsError{key, fmt.Sprintf("uses %s, which is no template: the one form is {{steps.NAME.output}}, "+
					"a step's output", ref)}
			case m[1] == s.Name:
				return &needsError{key, fmt.Sprintf("uses %s, its own output, which it cannot have", ref)}
			}
			if _, ok := f.step(m[1]); !ok {
				return &needsError{key, fmt.Sprintf("uses %s, and %s is not a step of the flow (the others: %s)", ref, m[1], f.names(s.Name))}
			}
			if !needs[m[1]] {
				return &needsError{key, fmt.Sprintf("uses %s: add %s to its needs (needs: [%s])", ref, m[1], strings.Join(slices.Concat(s.Needs, []string{m[1]}), ", "))}
			}
		}
	}
	return nil
}

// names lists the flow's steps but one.
func (f *Flow) names(but string) string {
	var names []string
	for _, s := range f.Steps {
		if s.Name != but {
			names = append(names, s.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// checkCycles refuses steps that need each other, directly or not.
func (f *Flow) checkCycles() error {
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		switch state[name] {
		case 1:
			cycle := append(path, name)
			cycle = cycle[slices.Index(cycle, name):]
			first, _ := f.step(cycle[0])
			var how []string
			for i := 0; i+1 < len(cycle); i++ {
				how = append(how, cycle[i]+" needs "+cycle[i+1])
			}
			return fmt.Errorf("%w: %sthe steps %s need each other (%s): break the cycle", ErrFlow, first.at("needs"),
				strings.Join(cycle[:len(cycle)-1], ", "), strings.Join(how, ", "))
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
