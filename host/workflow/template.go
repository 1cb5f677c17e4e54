package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnrun/cairn/host"
)

// templated are the texts of a step that templates are expanded in, each
// with the key that holds it: its prompt or task, and every string of a
// tool's input.
func (s Step) templated() [][2]string {
	out := [][2]string{{"prompt", s.Prompt}, {"task", s.Task}}
	walkStrings(s.Input, func(v string) string { out = append(out, [2]string{"input", v}); return v })
	return out
}

// expand replaces each {{steps.NAME.output}} in text with that step's
// output. The flow is validated, so every name is a completed need.
func expand(text string, outputs map[string]string) string {
	return stepRef.ReplaceAllStringFunc(text, func(m string) string {
		return outputs[stepRef.FindStringSubmatch(m)[1]]
	})
}

// expandInput returns a copy of a tool's input with every string expanded.
func expandInput(in any, outputs map[string]string) any {
	return walkStrings(in, func(v string) string { return expand(v, outputs) })
}

// walkStrings returns a copy of v, a decoded YAML value, with fn applied
// to every string in it.
func walkStrings(v any, fn func(string) string) any {
	switch x := v.(type) {
	case string:
		return fn(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = walkStrings(e, fn)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = walkStrings(e, fn)
		}
		return out
	}
	return v
}

// templateInputError: a tool step's input, its templates expanded, does
// not match its tool's input schema. The workflow keeps its file and the
// outputs the templates read, so a resume expands them the same way.
type templateInputError struct{ error }

func (e templateInputError) Unwrap() error { return e.error }

// checkExpanded checks a tool step's input, its templates expanded, against
// its tool's input schema before the step's agent af is made, so that text
// a template gave that the schema refuses (an enum's, a pattern's) is
// named with the template and the step it came from, not in the tool's
// words alone. Modules that cannot be read are left to the run, which says
// so.
func (r *runner) checkExpanded(af *host.AgentFile, j job) error {
	places := templatePlaces(j.step.Input, "")
	if j.step.Kind() != "tool" || len(places) == 0 {
		return nil
	}
	b, err := json.Marshal(j.input)
	if err != nil {
		return nil // toolAgent marshalled it already
	}
	err = host.CheckToolInput(af, j.step.Tool, string(b), nil)
	if !errors.Is(err, host.ErrArguments) {
		return nil
	}
	at := host.ArgumentsPlace(err)
	var from []string
	for _, p := range places {
		if at == "" || host.PlaceHolds(p, at) || host.PlaceHolds(at, p) {
			from = append(from, r.templateFrom(j.step.Input, p))
		}
	}
	if len(from) == 0 {
		for _, p := range places {
			from = append(from, r.templateFrom(j.step.Input, p))
		}
	}
	return templateInputError{fmt.Errorf("its input, its templates expanded, does not match tool %s's input schema: %w; it came from %s",
		j.step.Tool, err, strings.Join(from, ", and "))}
}

// templateFrom says what the template at the place p of in gave: the
// template and the outputs of the steps it names, shortened.
func (r *runner) templateFrom(in any, p string) string {
	t := templateAt(in, p)
	var outs []string
	for _, m := range stepRef.FindAllStringSubmatch(t, -1) {
		out := r.outputs[m[1]]
		if r := []rune(out); len(r) > 80 {
			out = string(r[:80]) + "..."
		}
		outs = append(outs, fmt.Sprintf("step %s's output, %q", m[1], out))
	}
	where := p
	if where == "" {
		where = "(the whole input)"
	}
	return fmt.Sprintf("the template %q at %s (%s)", t, where, strings.Join(outs, "; "))
}
