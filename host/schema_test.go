package host

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// What the model reads of arguments that do not match: where in them,
// and what is wrong, in the arguments' terms rather than the schema's.
func TestSchemaMessages(t *testing.T) {
	const tool = `{"type": "object", "required": ["path"], "additionalProperties": false,
		"properties": {
			"path": {"type": "string"},
			"n": {"type": "integer", "minimum": 1},
			"tags": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}},
			"mode": {"enum": ["a", "b"]}}}`
	s, err := compileSchema("t", tool)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ input, want string }{
		{`{"path": 5}`, `at /path: type: 5 has type "integer", want "string"`},
		{`{}`, `at (root): required: missing properties: ["path"]`},
		{`{"path": "x", "n": "three"}`, `at /n: type: three has type "string", want "integer"`},
		{`{"path": "x", "n": 0}`, `at /n: minimum: 0 is less than 1`},
		{`{"path": "x", "n": 2.5}`, `at /n: type: 2.5 has type "number", want "integer"`},
		{`{"path": "x", "extra": 1}`, `at (root): unexpected additional properties ["extra"]`},
		{`{"path": "x", "tags": [{"name": "long"}]}`, `at /tags/*/name: maxLength: "long" contains 4 Unicode code points, more than 3`},
		{`{"path": "x", "mode": "c"}`, `at /mode: enum: c does not equal any of: [a b]`},
		{`[1]`, `at (root): type: [1] has type "array", want "object"`},
		{`{"path": `, `not valid JSON`},
		{`{"path": "x"} {"path": "y"}`, `not valid JSON`},
	} {
		_, err := s.check(tc.input)
		if !errors.Is(err, errArguments) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an argument error saying %q", tc.input, err, tc.want)
		}
	}
	for _, ok := range []string{`{"path": "x"}`, `{"path": "x", "n": 2.0, "tags": [{"name": "abc"}], "mode": "b"}`} {
		if got, err := s.check(ok); err != nil || got != ok {
			t.Errorf("%s: %q, %v; want it as it is", ok, got, err)
		}
	}
	if _, err := s.check("  "); err == nil || !strings.Contains(err.Error(), `missing properties: ["path"]`) {
		t.Errorf("empty arguments: %v, want them read as {}, without the required path", err)
	}
	open, err := compileSchema("t", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := open.check("  "); err != nil || got != "{}" {
		t.Errorf("empty arguments to a tool without a schema: %q, %v; want {}", got, err)
	}
}

// Schemas as tools declare them: draft-07 and 2020-12, with local
// references; another draft is read as 2020-12; one that cannot be
// read, or refers outside itself, is refused when the tool is loaded.
func TestSchemaDrafts(t *testing.T) {
	for _, tc := range []struct{ schema, good, bad, compileErr string }{
		{`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"a": {"$ref": "#/definitions/n"}}, "definitions": {"n": {"type": "number"}}}`,
			`{"a": 1}`, `{"a": "x"}`, ""},
		{`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "number"}}}`,
			`{"a": 1}`, `{"a": "x"}`, ""},
		// Regression: draft-07 named without its "#" (as many tools name
		// it) refused every call: the validator knows only the "#" form.
		{`{"$schema": "http://json-schema.org/draft-07/schema", "type": "object", "properties": {"a": {"$ref": "#/definitions/n"}}, "definitions": {"n": {"type": "number"}}}`,
			`{"a": 1}`, `{"a": "x"}`, ""},
		{`{"$schema": "https://json-schema.org/draft-07/schema", "type": "object", "properties": {"a": {"type": "number"}}}`,
			`{"a": 1}`, `{"a": "x"}`, ""},
		{`{"$schema": "https://json-schema.org/draft/2020-12/schema#", "type": "object", "properties": {"a": {"type": "number"}}}`,
			`{"a": 1}`, `{"a": "x"}`, ""},
		{`{"$schema": "http://json-schema.org/draft-06/schema#", "type": "object", "properties": {"a": {"type": "number"}}}`,
			`{"a": 1}`, `{"a": "x"}`, ""},
		{`{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {"a": {"type": "number", "minimum": 1, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false}}}`,
			`{"a": 9}`, `{"a": 1}`, ""},
		{``, `{"anything": [1]}`, `"a string"`, ""},
		{`{"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}`, "", "", "is not local"},
		{`{"$ref": "#"}`, "", "", "loop"},
		{`{"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}`, "", "", "loop"},
		{`{"$dynamicAnchor": "x", "not": {"$dynamicRef": "#x"}}`, "", "", "loop"},
		{`{"type": "object", "properties": {"a~b/c": {"type": "string"}, "n": {"$ref": "#/properties/a~0b~1c"}}}`, `{"n": "x"}`, `{"n": 1}`, ""},
		{`{"type": "object", "properties": {"child": {"$ref": "#"}}}`, `{"child": {"child": {}}}`, `{"child": 5}`, ""},
		{`{"properties": {"a": {"$id": "urn:x", "type": "string"}}}`, "", "", "only the root"},
		{`{"type": 5}`, "", "", "input schema"},
		{`not json`, "", "", "input schema"},
	} {
		s, err := compileSchema("t", tc.schema)
		if tc.compileErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.compileErr) {
				t.Errorf("%s: %v, want an error saying %q", tc.schema, err, tc.compileErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.schema, err)
			continue
		}
		if _, err := s.check(tc.good); err != nil {
			t.Errorf("%s: %s refused: %v", tc.schema, tc.good, err)
		}
		if _, err := s.check(tc.bad); !errors.Is(err, errArguments) {
			t.Errorf("%s: %s: %v, want it refused", tc.schema, tc.bad, err)
		}
	}
}

// A tool's schema and a model's arguments are untrusted: whatever they
// hold, compiling and checking return (an error or not), never panic.
func FuzzSchemaCheck(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"a":1}`)
	f.Add(`{"$defs":{"x":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"}`, `{}`)
	f.Add(`{"anyOf":[{"type":"string"},{"minimum":3}],"not":{"const":4}}`, `4`)
	f.Add(`{"$dynamicRef":"#x","$dynamicAnchor":"x"}`, `[]`)
	f.Add(`{"items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`)
	f.Add(`{"pattern":"(","type":"string"}`, `"a"`)
	f.Fuzz(func(t *testing.T, schemaText, input string) {
		s, err := compileSchema("t", schemaText)
		if err != nil {
			return
		}
		got, err := s.check(input)
		if err == nil && strings.TrimSpace(input) != "" && got != input {
			t.Fatalf("accepted %q as %q", input, got)
		}
	})
}

// A schema whose references fan out would have the validator check a
// value once per path to it, doubling with each level: such arguments
// are refused at once, not checked for hours. Checks that fit, with the
// same kinds of references, go through.
func TestSchemaWorkIsBounded(t *testing.T) {
	var defs strings.Builder
	for i := range 40 {
		fmt.Fprintf(&defs, `"a%d": {"allOf": [{"$ref": "#/$defs/a%d"}, {"$ref": "#/$defs/a%d"}]}, `, i, i+1, i+1)
	}
	fanOut := `{"$defs": {` + defs.String() + `"a40": {"type": "object"}}, "$ref": "#/$defs/a0"}`
	deep := `{"$defs": {"n": {"allOf": [{"$ref": "#/$defs/m"}, {"$ref": "#/$defs/m"}]}, "m": {"properties": {"x": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}`
	nested := func(key string, depth int) string {
		return strings.Repeat(`{"`+key+`": `, depth) + "{}" + strings.Repeat("}", depth)
	}
	for _, tc := range []struct {
		schema, input string
		refused       bool
	}{
		{fanOut, `{}`, true},
		{deep, nested("x", 40), true},
		{deep, nested("x", 5), false},
		{`{"properties": {"child": {"$ref": "#"}}}`, nested("child", 200), false},
	} {
		s, err := compileSchema("t", tc.schema)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.check(tc.input) // without the bound, the first two would not end
		if refused := errors.Is(err, errArguments) && strings.Contains(err.Error(), "steps"); refused != tc.refused {
			t.Errorf("%.60s… with %.40s…: %v; want refused for its cost %v", tc.schema, tc.input, err, tc.refused)
		}
	}
}
