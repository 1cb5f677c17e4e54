package host

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// What a schema's types say of a value known only when a call is made:
// a workflow's template, whose value is text. The validator checks the
// text a template is written as, which tells nothing of the text it will
// be; its types do: a place whose schema (with the schemas that apply to
// it in place: $ref, allOf, anyOf, oneOf) allows no string refuses any
// text. An anyOf or a oneOf takes text when one of its schemas does, so a
// template may satisfy one branch. The rest (enum, pattern, not, if) is
// left to the call, which knows the text.

// textRefused says why no text could be the value at the place p of inst
// (a decoded JSON value), by the types that sch allows there; "" when
// some text could be.
func (sch *schema) textRefused(inst any, p string) string {
	if sch.graph == nil {
		return ""
	}
	w := &textWalk{g: sch.graph, seen: map[textKey]string{}}
	return w.at(sch.graph.root, inst, pointerSegments(p))
}

// textWalk walks a schema along a place in an instance, remembering what
// it found of each schema at each depth: a schema's in-place applicators
// may share subschemas, which would be walked again for each path to them.
type textWalk struct {
	g    *schemaGraph
	seen map[textKey]string
}

type textKey struct {
	s    *jsonschema.Schema
	left int
}

// at is textRefused of s, whose value is v, at the place segs below v.
func (w *textWalk) at(s *jsonschema.Schema, v any, segs []string) string {
	if s == nil {
		return ""
	}
	k := textKey{s, len(segs)}
	if why, ok := w.seen[k]; ok {
		return why
	}
	w.seen[k] = "" // in-place loops are refused by checkLoops; this is for safety
	why := w.inPlace(s, v, segs)
	if why == "" {
		why = w.own(s, v, segs)
	}
	w.seen[k] = why
	return why
}

// inPlace is at of the schemas that apply to s's value in place: a $ref
// and allOf must each take text, an anyOf and a oneOf one of theirs.
func (w *textWalk) inPlace(s *jsonschema.Schema, v any, segs []string) string {
	if s.Ref != "" {
		to, err := w.g.resolve(s.Ref)
		if err != nil || len(to) != 1 {
			return ""
		}
		if why := w.at(to[0], v, segs); why != "" {
			return why
		}
	}
	for i, c := range s.AllOf {
		if why := w.at(c, v, segs); why != "" {
			return fmt.Sprintf("allOf/%d: %s", i, why)
		}
	}
	for _, one := range []struct {
		key string
		of  []*jsonschema.Schema
	}{{"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		if len(one.of) == 0 {
			continue
		}
		var whys []string
		for _, c := range one.of {
			why := w.at(c, v, segs)
			if why == "" {
				whys = nil
				break
			}
			whys = append(whys, why)
		}
		if whys != nil {
			return fmt.Sprintf("%s: none of its schemas takes text (%s)", one.key, strings.Join(whys, "; "))
		}
	}
	return ""
}

// own is at of s's own keywords: its type, at the place itself, or the
// schemas of the property or item segs[0] names in v.
func (w *textWalk) own(s *jsonschema.Schema, v any, segs []string) string {
	if len(segs) == 0 {
		types := s.Types
		if s.Type != "" {
			types = []string{s.Type}
		}
		if len(types) > 0 && !slices.Contains(types, "string") {
			return fmt.Sprintf("type: want %s", strings.Join(types, " or "))
		}
		return ""
	}
	seg, rest := segs[0], segs[1:]
	switch x := v.(type) {
	case map[string]any:
		return w.property(s, x[seg], seg, rest)
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(x) {
			return ""
		}
		return w.at(item(s, i), x[i], rest)
	}
	return ""
}

// property is at of the schemas of the property name of an object, whose
// value is v.
func (w *textWalk) property(s *jsonschema.Schema, v any, name string, segs []string) string {
	matched := false
	if c, ok := s.Properties[name]; ok {
		matched = true
		if why := w.at(c, v, segs); why != "" {
			return why
		}
	}
	for pattern, c := range s.PatternProperties {
		re, err := regexp.Compile(pattern)
		if err != nil || !re.MatchString(name) {
			continue
		}
		matched = true
		if why := w.at(c, v, segs); why != "" {
			return why
		}
	}
	if !matched {
		return w.at(s.AdditionalProperties, v, segs)
	}
	return ""
}

// item is the schema of item i of an array: its prefixItems' (or draft
// 7's items array's), else items' (or draft 7's additionalItems').
func item(s *jsonschema.Schema, i int) *jsonschema.Schema {
	switch {
	case i < len(s.PrefixItems):
		return s.PrefixItems[i]
	case s.ItemsArray != nil && i < len(s.ItemsArray):
		return s.ItemsArray[i]
	case s.ItemsArray != nil:
		return s.AdditionalItems
	}
	return s.Items
}
