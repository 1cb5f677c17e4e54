package host

import (
	"encoding/json"
	"testing"

	"github.com/cairnrun/cairn/guest/builtin/tools"
)

// The built-in tools' schemas, and every schema guest.Define derives,
// are checked without the validator's reflection.
func TestBuiltinSchemasAreCheckedFast(t *testing.T) {
	for _, tool := range tools.All() {
		spec := tool.Spec()
		s, err := compileSchema(spec.Name, spec.InputSchema)
		if err != nil {
			t.Fatalf("%s: %v", spec.Name, err)
		}
		if s.fast == nil {
			t.Errorf("%s's schema is left to the validator: %s", spec.Name, spec.InputSchema)
		}
	}
}

// What the fast check takes, and what it leaves to the validator, schema
// by schema; in every case it agrees with the validator.
func TestFastSchemaAgreesWithTheValidator(t *testing.T) {
	for _, tc := range []struct {
		schema string
		fast   bool
		valid  []string
		bad    []string
	}{
		{`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"}},"required":["n"],"additionalProperties":false}`, true,
			[]string{`{"n":1}`, `{"n":1.0,"x":2}`, `{"n":-0,"x":0.5}`, `{"n":1e300}`},
			[]string{`{"n":1.5}`, `{"x":1}`, `{"n":1,"y":2}`, `{"n":"1"}`, `[]`, `null`, `{"n":1,"x":"2"}`}},
		{`{"type":"object","additionalProperties":{"type":"string"}}`, true,
			[]string{`{}`, `{"a":"b","c":""}`},
			[]string{`{"a":1}`, `"a"`}},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"s":{"type":"boolean"}},"required":["s"]}}}}`, true,
			[]string{`{"l":[]}`, `{"l":[{"s":true},{"s":false,"o":1}]}`, `{}`},
			[]string{`{"l":[{"s":1}]}`, `{"l":[{}]}`, `{"l":{}}`}},
		{`{"properties":{"gone":false,"any":true,"z":{"type":"null"}}}`, true,
			[]string{`{"any":[1,{}]}`, `5`, `{"z":null}`, `[1]`},
			[]string{`{"gone":1}`, `{"z":0}`}},
		{`{"required":["a"],"title":"t","description":"d","$comment":"c","default":{"a":1},"examples":[{"a":2}]}`, true,
			[]string{`{"a":null}`, `"not an object"`},
			[]string{`{"b":1}`}},
		{`{"type":"object","additionalProperties":true}`, true, []string{`{"a":1}`}, []string{`[]`}},
		{`{"type":"object","properties":{"s":{"type":"string","minLength":2}}}`, false,
			[]string{`{"s":"ab"}`}, []string{`{"s":"a"}`}},
		{`{"type":["string","null"]}`, false, []string{`null`, `"a"`}, []string{`1`}},
		{`{"enum":["a"]}`, false, []string{`"a"`}, []string{`"b"`}},
		{`{"type":"object","patternProperties":{"^x":{"type":"string"}},"additionalProperties":false}`, false,
			[]string{`{"xa":"b"}`}, []string{`{"y":1}`}},
		{`{"type":"strange"}`, false, nil, nil},
		{`{"not":{"type":"string"}}`, false, []string{`1`}, []string{`"a"`}},
	} {
		s, err := compileSchema("t", tc.schema)
		if err != nil {
			if tc.valid == nil && tc.bad == nil {
				continue
			}
			t.Fatalf("%s: %v", tc.schema, err)
		}
		if (s.fast != nil) != tc.fast {
			t.Errorf("%s: fast check %v, want %v", tc.schema, s.fast != nil, tc.fast)
		}
		for _, list := range []struct {
			args  []string
			valid bool
		}{{tc.valid, true}, {tc.bad, false}} {
			for _, args := range list.args {
				var inst any
				if err := json.Unmarshal([]byte(args), &inst); err != nil {
					t.Fatal(err)
				}
				if lib := s.resolved.Validate(inst) == nil; lib != list.valid {
					t.Errorf("%s: the validator takes %s: %v", tc.schema, args, lib)
				}
				if s.fast != nil && s.fast.valid(inst) != list.valid {
					t.Errorf("%s: the fast check takes %s: %v, want %v", tc.schema, args, !list.valid, list.valid)
				}
				if _, err := s.check(args); (err == nil) != list.valid {
					t.Errorf("%s: check(%s) = %v", tc.schema, args, err)
				}
			}
		}
	}
}

// Whatever schema and arguments, the fast check never takes arguments the
// validator refuses (which would let a call past its schema), nor refuses
// ones it takes.
func FuzzFastSchemaAgreesWithTheValidator(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, `{"a":"x"}`)
	f.Add(`{"type":"object","properties":{"n":{"type":"integer"}}}`, `{"n":2.5}`)
	f.Add(`{"type":"array","items":{"type":"number"}}`, `[1,2,"3"]`)
	f.Add(`{"additionalProperties":{"type":"boolean"},"properties":{"x":false}}`, `{"x":1,"y":true}`)
	f.Add(`{"type":"null"}`, `null`)
	for _, tool := range tools.All() {
		f.Add(tool.Spec().InputSchema, `{"path":"a","offset":1,"limit":2}`)
	}
	f.Fuzz(func(t *testing.T, schemaText, args string) {
		s, err := compileSchema("t", schemaText)
		if err != nil || s.fast == nil {
			return
		}
		var inst any
		if json.Unmarshal([]byte(args), &inst) != nil {
			return
		}
		var lib bool
		func() {
			defer func() {
				if recover() != nil {
					lib = !s.fast.valid(inst) // a validator panic: nothing to compare
				}
			}()
			lib = s.resolved.Validate(inst) == nil
		}()
		if fast := s.fast.valid(inst); fast != lib {
			t.Fatalf("schema %s, arguments %s: the fast check says %v, the validator %v", schemaText, args, fast, lib)
		}
	})
}
