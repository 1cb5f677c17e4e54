package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schema checks a call's arguments against its tool's input schema before
// any module runs, so a model's malformed call costs no sandbox time and
// comes back with an error it can act on.
type schema struct {
	compiled *jsonschema.Schema
}

// schemaText is the schema a tool declared, or the schema of "any object"
// when it declared none.
func schemaText(s string) string {
	if strings.TrimSpace(s) == "" {
		return `{"type":"object"}`
	}
	return s
}

func compileSchema(tool, text string) (*schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schemaText(text)))
	if err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	url := "urn:cairn:tool:" + tool
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("input schema does not compile: %w", err)
	}
	return &schema{compiled: compiled}, nil
}

// errArguments marks an error in the model's arguments.
var errArguments = errors.New("invalid arguments")

// check returns the arguments in normal form (an empty input is "{}"), or
// an error that tells the model what is wrong with them.
func (s *schema) check(input string) (string, error) {
	if strings.TrimSpace(input) == "" {
		input = "{}"
	}
	if !json.Valid([]byte(input)) {
		return "", fmt.Errorf("%w: not valid JSON; send one JSON object that matches the tool's input schema", errArguments)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(input))
	if err != nil {
		return "", fmt.Errorf("%w: %v", errArguments, err)
	}
	if err := s.compiled.Validate(inst); err != nil {
		return "", fmt.Errorf("%w: they do not match the input schema: %s", errArguments, validationText(err))
	}
	return input, nil
}

// validationText flattens a validation error to lines the model can read,
// without the schema's internal URL.
func validationText(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var parts []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "(root)"
		}
		parts = append(parts, fmt.Sprintf("at %s: %s", loc, u.Error.String()))
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return strings.Join(parts, "; ")
}
