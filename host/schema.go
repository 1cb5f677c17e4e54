package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// schema checks a call's arguments against its tool's input schema before
// any module runs, so a model's malformed call costs no sandbox time and
// comes back with an error it can act on.
//
// The validator is google/jsonschema-go (draft 2020-12 and draft-07; a
// schema that names another draft is read as 2020-12, with draft 4's
// boolean bounds rewritten: see draft4Bounds), which the MCP SDK
// links anyway and which costs nothing when the program starts. A tool's
// schema is untrusted input: a panic of the validator is an error here.
type schema struct {
	resolved *jsonschema.Resolved
	// refs is the graph of a schema with references, whose checks of a
	// call's arguments are counted first (checkWork); nil for one without.
	refs *schemaGraph
	// graph is the schema's graph, with or without references
	// (textRefused walks it).
	graph *schemaGraph
	// fast passes the arguments the schema takes without the validator,
	// when the schema is of the kind it covers (schema_fast.go); nil
	// otherwise.
	fast *fastSchema
}

// schemaText is the schema a tool declared, or the schema of "any object"
// when it declared none.
func schemaText(s string) string {
	if strings.TrimSpace(s) == "" {
		return `{"type":"object"}`
	}
	return s
}

// drafts maps the $schema values of the drafts the validator reads to
// the spelling it knows them by: a draft's URI with or without its empty
// fragment ("#") and over http or https names the same draft, and the
// validator refuses every instance of a schema whose $schema it does not
// know verbatim.
var drafts = map[string]string{
	"": "",
	"http://json-schema.org/draft-07/schema#":       draft07,
	"http://json-schema.org/draft-07/schema":        draft07,
	"https://json-schema.org/draft-07/schema#":      draft07,
	"https://json-schema.org/draft-07/schema":       draft07,
	"https://json-schema.org/draft/2020-12/schema":  draft2020,
	"https://json-schema.org/draft/2020-12/schema#": draft2020,
	"http://json-schema.org/draft/2020-12/schema":   draft2020,
	"http://json-schema.org/draft/2020-12/schema#":  draft2020,
}

const (
	draft07   = "http://json-schema.org/draft-07/schema#"
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
)

func compileSchema(tool, text string) (s *schema, err error) {
	defer recoverAs(&err, "input schema does not compile")
	var doc jsonschema.Schema
	if err := json.Unmarshal(draft4Bounds([]byte(schemaText(text))), &doc); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	doc.Schema = drafts[doc.Schema] // another draft is read as 2020-12
	g, err := checkLoops(&doc)
	if err != nil {
		return nil, err
	}
	rs, err := doc.Resolve(&jsonschema.ResolveOptions{BaseURI: "urn:cairn:tool:" + tool})
	if err != nil {
		return nil, fmt.Errorf("input schema does not compile: %w", err)
	}
	s = &schema{resolved: rs, graph: g}
	if g.hasReferences() {
		s.refs = g
	} else {
		s.fast = newFastSchema(&doc)
	}
	return s, nil
}

// draft4Bounds rewrites draft 4's boolean exclusiveMinimum and
// exclusiveMaximum ({"minimum": 1, "exclusiveMinimum": true}) into the
// numbers later drafts use ({"exclusiveMinimum": 1}), which is all that
// keeps most draft-4 schemas from reading as 2020-12. Any other text is
// returned as it is.
func draft4Bounds(text []byte) []byte {
	if !bytes.Contains(text, []byte(`"exclusiveM`)) {
		return text
	}
	var doc any
	if json.Unmarshal(text, &doc) != nil {
		return text
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, b := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
				if excl, ok := v[b[0]].(bool); ok {
					delete(v, b[0])
					if bound, has := v[b[1]]; excl && has {
						v[b[0]] = bound
						delete(v, b[1])
					}
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		return text
	}
	return out
}

// recoverAs turns a panic into *err, prefixed with what.
func recoverAs(err *error, what string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s: the validator failed: %v", what, p)
	}
}

// errArguments marks an error in the model's arguments.
var errArguments = errors.New("invalid arguments")

// check returns the arguments in normal form (an empty input is "{}"), or
// an error that tells the model what is wrong with them.
func (s *schema) check(input string) (_ string, err error) {
	if strings.TrimSpace(input) == "" {
		input = "{}"
	}
	var inst any
	if err := json.Unmarshal([]byte(input), &inst); err != nil {
		return "", fmt.Errorf("%w: not valid JSON; send one JSON object that matches the tool's input schema", errArguments)
	}
	if s.fast != nil && s.fast.valid(inst) {
		return input, nil
	}
	if err := checkWork(s.refs, inst); err != nil {
		return "", err
	}
	defer recoverAs(&err, errArguments.Error()+": they could not be checked against the input schema")
	if err := s.resolved.Validate(inst); err != nil {
		where, msg := validationWhere(err)
		return "", fmt.Errorf("%w: they do not match the input schema: %w", errArguments, &schemaError{where, msg})
	}
	return input, nil
}

// schemaError is where in a call's arguments they fail their schema
// (argumentPath's form), and what is wrong there.
type schemaError struct{ where, msg string }

func (e *schemaError) Error() string { return "at " + e.where + ": " + e.msg }

// validationWhere is the validator's error as the model reads it: where in
// the arguments, as a JSON pointer ("/items/*/name": "*" for any item),
// and what is wrong there. The validator names the schema it checked
// ("validating /properties/items/items/properties/name: ..."); its path
// is turned into the arguments' where it can be, and kept otherwise.
func validationWhere(err error) (where, msg string) {
	msg, where = err.Error(), "root"
	for strings.HasPrefix(msg, "validating ") {
		head, rest, ok := strings.Cut(strings.TrimPrefix(msg, "validating "), ": ")
		if !ok {
			break
		}
		where, msg = head, rest
	}
	return argumentPath(where), wholeNumbers.ReplaceAllString(msg, "$1")
}

// wholeNumbers are numbers as the validator prints them, as fractions or
// with six zero decimals ("0/1", "1.000000").
var wholeNumbers = regexp.MustCompile(`\b(-?\d+)(?:/1|\.0{6})\b`)

// argumentPath is where in the arguments the schema at pointer applies:
// "/properties/a/items" is "/a/*". A pointer through any other keyword
// ($defs, anyOf, ...) is returned as the schema's: "schema /$defs/x".
func argumentPath(pointer string) string {
	if pointer == "root" || pointer == "" {
		return "(root)"
	}
	segs := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	var out []string
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "patternProperties", "prefixItems":
			if i+1 == len(segs) {
				return "schema " + pointer
			}
			if segs[i] == "properties" || segs[i] == "prefixItems" {
				out = append(out, segs[i+1])
			} else {
				out = append(out, "*")
			}
			i++
		case "items", "additionalProperties", "additionalItems":
			out = append(out, "*")
		default:
			return "schema " + pointer
		}
	}
	return "/" + strings.Join(out, "/")
}
