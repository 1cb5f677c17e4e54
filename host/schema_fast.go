package host

import (
	"math"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// fastSchema checks arguments against the kind of schema most tools
// declare (the schemas guest.Define derives from a Go struct: types,
// properties, required, additionalProperties and items, with titles and
// descriptions) without the validator's reflection, which costs a call
// tens of allocations. It only ever answers "valid": arguments it finds
// invalid go to the validator, which words the refusal, so a schema it
// covers refuses exactly as before. A schema that uses any other keyword
// anywhere gets no fastSchema, and the validator checks all its calls.
type fastSchema struct {
	// never is the schema false: nothing is valid.
	never bool
	// typ is the one type the value must have, or "" for any.
	typ string
	// Of an object: its properties' schemas, those that must be there,
	// and what other properties may be: closed, none; else each checked
	// against rest, when not nil.
	props    map[string]*fastSchema
	required []string
	closed   bool
	rest     *fastSchema
	// items is the schema of every item of an array, when not nil.
	items *fastSchema
}

// fastKeywords are the fields of a jsonschema.Schema that fastSchema
// understands or that do not change what is valid. A schema with any
// other field set is left to the validator; so is one with a field the
// validator's next version adds, which is unknown here.
var fastKeywords = map[string]bool{
	"Schema": true, "Title": true, "Description": true, "Comment": true, "Default": true,
	"Deprecated": true, "ReadOnly": true, "WriteOnly": true, "Examples": true,
	"Type": true, "Properties": true, "Required": true, "AdditionalProperties": true,
	"Items": true, "PropertyOrder": true,
}

// fastTypes are the types of JSON values.
var fastTypes = map[string]bool{
	"object": true, "array": true, "string": true, "integer": true, "number": true, "boolean": true, "null": true,
}

// newFastSchema is s's fastSchema, or nil when s uses a keyword it does
// not cover.
func newFastSchema(s *jsonschema.Schema) *fastSchema {
	if s == nil {
		return nil
	}
	if isFalseSchema(s) {
		return &fastSchema{never: true}
	}
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if !fastKeywords[v.Type().Field(i).Name] && !v.Field(i).IsZero() {
			return nil
		}
	}
	if s.Type != "" && !fastTypes[s.Type] {
		return nil
	}
	f := &fastSchema{typ: s.Type, required: s.Required}
	if len(s.Properties) > 0 {
		f.props = make(map[string]*fastSchema, len(s.Properties))
		for name, p := range s.Properties {
			if f.props[name] = newFastSchema(p); f.props[name] == nil {
				return nil
			}
		}
	}
	if s.AdditionalProperties != nil {
		if f.rest = newFastSchema(s.AdditionalProperties); f.rest == nil {
			return nil
		}
		f.closed, f.rest = f.rest.never, f.rest.orNil()
	}
	if s.Items != nil {
		if f.items = newFastSchema(s.Items); f.items == nil {
			return nil
		}
	}
	return f
}

// isFalseSchema reports whether s is the schema false, which the
// validator reads as {"not": {}}.
func isFalseSchema(s *jsonschema.Schema) bool {
	if s.Not == nil || !reflect.ValueOf(*s.Not).IsZero() {
		return false
	}
	rest := *s
	rest.Not = nil
	return reflect.ValueOf(rest).IsZero()
}

// orNil is f, or nil when f takes every value and so needs no check.
func (f *fastSchema) orNil() *fastSchema {
	if f.never || f.typ != "" || f.props != nil || f.required != nil || f.rest != nil || f.items != nil {
		return f
	}
	return nil
}

// valid reports whether v, a value json.Unmarshal decoded into an any,
// matches the schema.
func (f *fastSchema) valid(v any) bool {
	if f.never || !f.typeOK(v) {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		for _, name := range f.required {
			if _, ok := v[name]; !ok {
				return false
			}
		}
		for name, x := range v {
			if p, ok := f.props[name]; ok {
				if !p.valid(x) {
					return false
				}
			} else if f.closed || f.rest != nil && !f.rest.valid(x) {
				return false
			}
		}
	case []any:
		if f.items != nil {
			for _, x := range v {
				if !f.items.valid(x) {
					return false
				}
			}
		}
	}
	return true
}

// typeOK reports whether v has the schema's type. A number is an integer
// when it has no fraction, as the validator has it.
func (f *fastSchema) typeOK(v any) bool {
	switch f.typ {
	case "":
		return true
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		if !ok {
			return false
		}
		_, frac := math.Modf(n)
		return frac == 0
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}
