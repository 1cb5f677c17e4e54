package host

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// The validator does not remember what it has checked: a schema whose
// references fan out ({"allOf": [{"$ref": "#/$defs/a"}, {"$ref":
// "#/$defs/a"}]} and so on down, or a reference back to the root through
// properties with two ways to reach it) checks a value once per path to
// it, which can double with each level of the arguments. checkLoops keeps
// that finite; checkWork keeps it small. Before a schema with references
// checks a call's arguments, the checks it would make are counted, each
// (schema, value) pair once with how many paths reach it, and arguments
// that would take more than maxCheckWork are refused. A schema without
// references reaches each value along one path per schema, and is not
// counted.

// maxCheckWork bounds the checks of one call's arguments: well past any
// real tool's (a schema of a hundred subschemas over a thousand values is
// 100,000), and a fraction of a second of the validator's time.
const maxCheckWork = 1 << 20

// value is a node of the arguments, so that the count can remember pairs.
type value struct {
	object map[string]*value
	array  []*value
}

func valueOf(v any) *value {
	switch v := v.(type) {
	case map[string]any:
		n := &value{object: make(map[string]*value, len(v))}
		for k, c := range v {
			n.object[k] = valueOf(c)
		}
		return n
	case []any:
		n := &value{array: make([]*value, len(v))}
		for i, c := range v {
			n.array[i] = valueOf(c)
		}
		return n
	}
	return &value{}
}

// workCounter counts, saturating at maxCheckWork+1.
type workCounter struct {
	g    *schemaGraph
	memo map[workKey]int
	key  *value // any property name, as a value
}

type workKey struct {
	s *jsonschema.Schema
	v *value
}

// checkWork refuses arguments whose check against a schema with
// references would take more than maxCheckWork checks.
func checkWork(g *schemaGraph, inst any) error {
	if g == nil {
		return nil
	}
	c := &workCounter{g: g, memo: map[workKey]int{}, key: &value{}}
	if n := c.count(g.root, valueOf(inst)); n > maxCheckWork {
		return fmt.Errorf("%w: checking them against the input schema would take more than %d steps", errArguments, maxCheckWork)
	}
	return nil
}

func (c *workCounter) count(s *jsonschema.Schema, v *value) int {
	if s == nil {
		return 0
	}
	k := workKey{s, v}
	if n, ok := c.memo[k]; ok {
		return n
	}
	c.memo[k] = maxCheckWork + 1 // a pair reached again while counting it (checkLoops forbids it) counts as too many
	n := 1
	add := func(m int) { n = min(n+m, maxCheckWork+1) }
	for _, t := range c.g.next[s] {
		add(c.count(t, v))
	}
	if v.object != nil {
		for name, u := range v.object {
			if p := s.Properties[name]; p != nil {
				add(c.count(p, u))
			}
			for _, p := range s.PatternProperties {
				add(c.count(p, u))
			}
			add(c.count(s.AdditionalProperties, u))
			add(c.count(s.UnevaluatedProperties, u))
			add(c.count(s.PropertyNames, c.key))
		}
	}
	for i, u := range v.array {
		if i < len(s.PrefixItems) {
			add(c.count(s.PrefixItems[i], u))
		}
		if i < len(s.ItemsArray) {
			add(c.count(s.ItemsArray[i], u))
		}
		add(c.count(s.Items, u))
		add(c.count(s.AdditionalItems, u))
		add(c.count(s.Contains, u))
		add(c.count(s.UnevaluatedItems, u))
	}
	c.memo[k] = n
	return n
}

// hasReferences reports whether any schema in g refers to another.
func (g *schemaGraph) hasReferences() bool {
	for s := range g.path {
		if s.Ref != "" || s.DynamicRef != "" {
			return true
		}
	}
	return false
}
