package workflow

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
