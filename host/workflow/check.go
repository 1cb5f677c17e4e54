package workflow

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/host/model"
)

// checkSteps checks each of steps as check does, before anything is
// stored or run, so that a step whose files or grants are wrong is refused
// at the start rather than failing the workflow when its turn comes, after
// earlier steps did their work: a stored workflow keeps its workflow file,
// so a resume could not take a fix of it. flowWS is the workflow's
// workspace.
//
// # Errors
//
// ErrFlow, once for each step that fails its check, naming the step and
// wrapping what is wrong (host.ErrMissing for a file that is not there,
// host.ErrGrant for a grant its tools ask more of, host.ErrSubAgent for a
// sub-agent refused, host.ErrArguments for a tool step's input its tool's
// schema refuses).
func (f *Flow) checkSteps(flowWS string, steps []Step) error {
	var errs []error
	for _, s := range steps {
		if key, err := f.check(s, flowWS); err != nil {
			errs = append(errs, fmt.Errorf("%w: %sstep %s: %w", ErrFlow, s.at(key), s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkUnstarted checks, as Run does, the steps a resume starts anew:
// those the journal lacks whose agent is not continued (an agent that is
// continued runs the definition it was made with), and that a resume
// does not leave alone (job.blocked).
func (r *runner) checkUnstarted() error {
	var steps []Step
	for _, s := range r.flow.Steps {
		if _, done := r.outputs[s.Name]; done {
			continue
		}
		if j := r.prepare(s); !j.resumed && j.foreign == "" && j.blocked(r.rec.ID) == "" {
			steps = append(steps, s)
		}
	}
	return r.flow.checkSteps(r.rec.Workspace, steps)
}

// check checks what a step needs that can be seen without running it, as
// its agent's start would: its agent file reads and is valid (for a
// delegation, the parent's, declaring the sub-agent, which narrows it),
// its tools pass the start's own check (host.CheckTools: every module is
// there with every tool its only: lists, every grant covers its tools and
// reads, its sub-agents read and narrow it; for a tool step, the step's
// module, tool and grant), its model's script reads, its workspace is a
// directory, and a tool step's input matches its tool's input schema
// where it is literal (checkInput). key is the step's key whose value the
// error is about, for the line it names: the agent file's (agent:, or
// parent: for a delegation, delegate: for its sub-agent), the module's (a
// tool step's tool: for a tool its module lacks), the workspace's, or a
// tool step's input:.
func (f *Flow) check(s Step, flowWS string) (key string, err error) {
	key = map[string]string{"agent": "agent", "delegate": "parent", "tool": "module"}[s.Kind()]
	ws := f.workspace(s, flowWS)
	af, err := f.agentFile(s, s.Input, ws)
	switch {
	case errors.Is(err, host.ErrSubAgent):
		return "delegate", err
	case errors.Is(err, errToolWorkspace):
		return "", err
	}
	if err != nil {
		return key, err
	}
	if err := host.CheckTools(af); err != nil {
		if s.Kind() == "tool" && errors.Is(err, host.ErrGrant) {
			return "grant", fmt.Errorf("%w (a tool step's agent file is the step itself: change its grant: in the workflow file)", err)
		}
		// A tool step's agent offers its tool by an only: the workflow
		// file does not have: the step's tool: names it.
		var none *host.NoToolError
		if s.Kind() == "tool" && errors.As(err, &none) {
			return "tool", fmt.Errorf("module %s has no tool %q (it has %s): fix the step's tool: in the workflow file, or name a module: that has it",
				s.Module, none.Tool, strings.Join(none.Tools, ", "))
		}
		return key, err
	}
	if err := checkModel(af); err != nil {
		return key, err
	}
	if ws == "" {
		ws = af.WorkspaceDir()
	}
	if s.Workspace != "" {
		key = "workspace"
	}
	if err := checkWorkspace(ws); err != nil {
		return key, err
	}
	if s.Kind() == "tool" {
		if err := checkInput(af, s); err != nil {
			return "input", err
		}
	}
	return "", nil
}

// checkInput checks a tool step's input against its tool's input schema,
// as its call will be checked, leaving the text of each string that holds
// a template to the call: it is known only then. That it is text is known
// now: a template where the schema takes no string is refused.
func checkInput(af *host.AgentFile, s Step) error {
	in := s.Input
	if in == nil {
		in = map[string]any{}
	}
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	err = host.CheckToolInput(af, s.Tool, string(b), templatePlaces(in, ""))
	var pt *host.PendingTypeError
	switch {
	case errors.As(err, &pt):
		return fmt.Errorf("input of tool %s: at %s: the template %q gives text (a step's output, as it is), "+
			"and the tool's input schema takes no text there (%s); fix the step's input: in the workflow file",
			s.Tool, cmp.Or(pt.Place, "(the whole input)"), templateAt(in, pt.Place), pt.Msg)
	case err != nil:
		return fmt.Errorf("input of tool %s: %w; fix the step's input: in the workflow file", s.Tool, err)
	}
	return nil
}

// templateAt is the string at the place at, a JSON pointer ("*" for any
// item), in v, a decoded YAML value, or "" for none.
func templateAt(v any, at string) string {
	for _, seg := range strings.Split(strings.TrimPrefix(at, "/"), "/") {
		if at == "" {
			break
		}
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return ""
			}
			v = x[i]
		default:
			return ""
		}
	}
	s, _ := v.(string)
	return s
}

// templatePlaces are the places in v, a decoded YAML value at the JSON
// pointer at, of the strings that hold a template.
func templatePlaces(v any, at string) []string {
	var out []string
	switch x := v.(type) {
	case string:
		if stepRef.MatchString(x) {
			out = append(out, at)
		}
	case []any:
		for i, e := range x {
			out = append(out, templatePlaces(e, fmt.Sprintf("%s/%d", at, i))...)
		}
	case map[string]any:
		for k, e := range x {
			out = append(out, templatePlaces(e, at+"/"+k)...)
		}
	}
	return out
}

// checkModel opens the agent's model as its run will, which for a script
// reads the script; opening any other provider reaches no network.
func checkModel(af *host.AgentFile) error {
	spec := af.Model
	if spec.Script != "" && spec.ScriptData == nil && !filepath.IsAbs(spec.Script) {
		spec.Script = filepath.Join(af.Dir, spec.Script)
	}
	if _, err := model.Open(spec); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// checkWorkspace refuses a workspace that is not named or not a directory.
func checkWorkspace(ws string) error {
	if ws == "" {
		return errors.New("no workspace: set workspace: in the workflow file, in the step or in its agent file")
	}
	fi, err := os.Stat(ws)
	if err != nil {
		return fmt.Errorf("workspace: %w; make it, or set another", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("workspace %s is not a directory", ws)
	}
	return nil
}
