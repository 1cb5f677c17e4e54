package host

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// A tool's input schema comes from an untrusted module or server, and the
// validator follows its references by recursion: a reference that leads
// back to itself without reaching into the arguments ({"$ref": "#"}, or
// two definitions that refer to each other through allOf) would recurse
// until the process's stack is exhausted, which no recover catches. So a
// schema is checked before it is resolved: its references must be local
// ("#", "#/pointer", "#anchor"), only its root may have an $id, and no
// chain of the keywords that apply to the same value ($ref, $dynamicRef,
// allOf, anyOf, oneOf, not, if, then, else, dependentSchemas) may loop.
// A loop through properties or items is fine: each turn of it goes one
// level into the arguments, whose depth is bounded.

// errSchemaLoop marks a schema whose references loop in place.
var errSchemaLoop = errors.New("its references loop without reaching into the arguments")

// checkLoops refuses a schema the validator could recurse in forever. It
// returns the schema's graph, which checkWork counts with.
func checkLoops(root *jsonschema.Schema) (*schemaGraph, error) {
	g := &schemaGraph{root: root, at: map[string]*jsonschema.Schema{}, path: map[*jsonschema.Schema]string{},
		anchors: map[string][]*jsonschema.Schema{}}
	if err := g.index(root, ""); err != nil {
		return nil, err
	}
	g.next = map[*jsonschema.Schema][]*jsonschema.Schema{}
	state := map[*jsonschema.Schema]int{} // 1 on the path being walked, 2 done
	var visit func(s *jsonschema.Schema) error
	visit = func(s *jsonschema.Schema) error {
		switch state[s] {
		case 1:
			return fmt.Errorf("%w (at %s)", errSchemaLoop, g.pointer(s))
		case 2:
			return nil
		}
		state[s] = 1
		next, err := g.inPlace(s)
		if err != nil {
			return err
		}
		g.next[s] = next
		for _, n := range next {
			if err := visit(n); err != nil {
				return err
			}
		}
		state[s] = 2
		return nil
	}
	for s := range g.path {
		if err := visit(s); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// schemaGraph indexes a schema's subschemas by JSON pointer and anchor.
type schemaGraph struct {
	root    *jsonschema.Schema
	at      map[string]*jsonschema.Schema
	path    map[*jsonschema.Schema]string
	anchors map[string][]*jsonschema.Schema
	// next holds, once checkLoops has walked the schema, what inPlace
	// returns for each subschema: checkWork counts along it per call.
	next map[*jsonschema.Schema][]*jsonschema.Schema
}

func (g *schemaGraph) pointer(s *jsonschema.Schema) string {
	if p := g.path[s]; p != "" {
		return p
	}
	return "the root"
}

// index records s, at pointer p, and every schema under it.
func (g *schemaGraph) index(s *jsonschema.Schema, p string) error {
	if s == nil {
		return nil
	}
	if _, seen := g.path[s]; seen {
		return nil
	}
	if s.ID != "" && s != g.root {
		return fmt.Errorf("input schema: $id %q at %s: only the root may have one", s.ID, p)
	}
	g.at[p], g.path[s] = s, p
	for _, a := range []string{s.Anchor, s.DynamicAnchor} {
		if a != "" {
			g.anchors[a] = append(g.anchors[a], s)
		}
	}
	var err error
	each := func(key string, c *jsonschema.Schema) {
		if err == nil {
			err = g.index(c, p+"/"+key)
		}
	}
	forChildren(s, each)
	return err
}

// forChildren calls f with every schema directly under s and its place.
func forChildren(s *jsonschema.Schema, f func(key string, c *jsonschema.Schema)) {
	one := map[string]*jsonschema.Schema{"items": s.Items, "additionalItems": s.AdditionalItems, "contains": s.Contains,
		"unevaluatedItems": s.UnevaluatedItems, "additionalProperties": s.AdditionalProperties,
		"propertyNames": s.PropertyNames, "unevaluatedProperties": s.UnevaluatedProperties, "not": s.Not,
		"if": s.If, "then": s.Then, "else": s.Else, "contentSchema": s.ContentSchema}
	for k, c := range one {
		if c != nil {
			f(k, c)
		}
	}
	lists := map[string][]*jsonschema.Schema{"items": s.ItemsArray, "prefixItems": s.PrefixItems,
		"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf}
	for k, l := range lists {
		for i, c := range l {
			f(k+"/"+strconv.Itoa(i), c)
		}
	}
	maps := map[string]map[string]*jsonschema.Schema{"$defs": s.Defs, "definitions": s.Definitions,
		"properties": s.Properties, "patternProperties": s.PatternProperties,
		"dependentSchemas": s.DependentSchemas, "dependencies": s.DependencySchemas}
	for k, m := range maps {
		for name, c := range m {
			f(k+"/"+escapePointer(name), c)
		}
	}
}

// inPlace are the schemas that apply to the same value as s: what its
// references and in-place applicators lead to.
func (g *schemaGraph) inPlace(s *jsonschema.Schema) ([]*jsonschema.Schema, error) {
	var out []*jsonschema.Schema
	if s.Ref != "" {
		t, err := g.resolve(s.Ref)
		if err != nil {
			return nil, fmt.Errorf("input schema: $ref at %s: %w", g.pointer(s), err)
		}
		out = append(out, t...)
	}
	if s.DynamicRef != "" {
		t, err := g.resolve(s.DynamicRef)
		if err != nil {
			return nil, fmt.Errorf("input schema: $dynamicRef at %s: %w", g.pointer(s), err)
		}
		out = append(out, t...)
	}
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, c := range []*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
		if c != nil {
			out = append(out, c)
		}
	}
	for _, m := range []map[string]*jsonschema.Schema{s.DependentSchemas, s.DependencySchemas} {
		for _, c := range m {
			out = append(out, c)
		}
	}
	return out, nil
}

// resolve finds what a local reference names: the root for "#" (or the
// root's $id), the schema at a JSON pointer, or every schema with an
// anchor of that name (a $dynamicRef may reach any of them).
func (g *schemaGraph) resolve(ref string) ([]*jsonschema.Schema, error) {
	if g.root.ID != "" && strings.HasPrefix(ref, g.root.ID) {
		ref = strings.TrimPrefix(ref, g.root.ID)
	}
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, fmt.Errorf("%q is not local: a reference must be \"#\", \"#/pointer\" or \"#anchor\"", ref)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", ref, err)
	}
	switch {
	case frag == "":
		return []*jsonschema.Schema{g.root}, nil
	case strings.HasPrefix(frag, "/"):
		if s := g.at[frag]; s != nil {
			return []*jsonschema.Schema{s}, nil
		}
		return nil, fmt.Errorf("%q names no schema", ref)
	}
	if a := g.anchors[frag]; len(a) > 0 {
		return a, nil
	}
	return nil, fmt.Errorf("%q names no anchor", ref)
}

// escapePointer escapes a key for a JSON pointer.
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
