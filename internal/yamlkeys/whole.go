package yamlkeys

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// WholeNumbers refuses a number that is not whole, such as 1.5 (or .inf),
// written for a key whose Go field holds a whole number, as data is
// decoded into the type root: yaml.v3 cuts it to its whole part without a
// word, so that max_rounds: 1.5 would be 1, and 0.5 would be 0. The error
// names the line and the key, in the words of Friendly:
// "line 4: limits.max_rounds: want a whole number, found `1.5`".
//
// A value of a type that reads itself and is no struct (a size, a
// duration) is its reader's to check. Data whose first document does not
// decode into a tree is not refused here; its decoder says what is wrong.
func WholeNumbers(data []byte, root reflect.Type) error {
	if !holdsWhole(root, map[reflect.Type]bool{}) {
		return nil
	}
	var doc yaml.Node
	if yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc) != nil {
		return nil
	}
	w := wholeWalk{seen: map[wholeVisit]bool{}}
	return w.walk(&doc, root, "")
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// readsItself reports whether t reads itself from YAML and is no struct,
// whose fields would show what it holds.
func readsItself(t reflect.Type) bool {
	return t.Kind() != reflect.Struct && (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType))
}

// holdsWhole reports whether a field of a whole number is reachable from
// t, as WholeNumbers walks it.
func holdsWhole(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if seen[t] || readsItself(t) {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	case reflect.Struct:
		for _, ft := range yamlFields(t) {
			if holdsWhole(ft, seen) {
				return true
			}
		}
	}
	return false
}

// yamlFields are the fields of the struct t by the keys yaml reads them
// from, those of inline fields among them.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct {
			for k, ft := range yamlFields(f.Type) {
				out[k] = ft
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

// wholeWalk walks a YAML tree beside the Go type it is decoded into,
// each node once for each type (an alias repeated over and over is walked
// once).
type wholeWalk struct {
	seen map[wholeVisit]bool
}

type wholeVisit struct {
	n *yaml.Node
	t reflect.Type
}

// walk checks the node n, decoded into a value of type t found at the
// key path.
func (w wholeWalk) walk(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if w.seen[wholeVisit{n, t}] {
		return nil
	}
	w.seen[wholeVisit{n, t}] = true
	switch {
	case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
		return w.walk(n.Content[0], t, path)
	case n.Kind == yaml.AliasNode && n.Alias != nil:
		return w.walk(n.Alias, t, path)
	case readsItself(t):
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return w.mapping(n, t, path, yamlFields(t))
	case reflect.Map:
		return w.mapping(n, t, path, nil)
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for _, item := range n.Content {
			if err := w.walk(item, t.Elem(), path); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return whole(n, path)
	}
	return nil
}

// mapping checks the values of the mapping node n, decoded into the
// struct of fields, or, with none, into the map type t; a merge (<<)
// is checked as the mapping it merges.
func (w wholeWalk) mapping(n *yaml.Node, t reflect.Type, path string, fields map[string]reflect.Type) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var err error
		switch ft, ok := fields[k.Value]; {
		case k.ShortTag() == "!!merge":
			err = w.merged(v, t, path)
		case fields == nil:
			err = w.walk(v, t.Elem(), join(path, k.Value))
		case ok:
			err = w.walk(v, ft, join(path, k.Value))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// merged checks what a merge key (<<) merges into a mapping of type t:
// a mapping, or a list of them.
func (w wholeWalk) merged(v *yaml.Node, t reflect.Type, path string) error {
	if v.Kind != yaml.SequenceNode {
		return w.walk(v, t, path)
	}
	for _, m := range v.Content {
		if err := w.walk(m, t, path); err != nil {
			return err
		}
	}
	return nil
}

// whole refuses the scalar n, at the key path, as a number that is not whole.
func whole(n *yaml.Node, path string) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!float" {
		return nil
	}
	var f float64
	if n.Decode(&f) != nil {
		return nil
	}
	if f == math.Trunc(f) && !math.IsInf(f, 0) {
		return nil
	}
	return fmt.Errorf("line %d: %s: want a whole number, found `%s`", n.Line, path, n.Value)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
