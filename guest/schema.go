package guest

import (
	"encoding/json"
	"reflect"
	"strings"
)

// SchemaOf derives the JSON Schema of a tool's input from its Go type: a
// struct becomes an object whose properties are its exported fields, named
// by their `json` tags and described by their `desc` tags; a field is
// required unless it is a pointer or tagged omitempty.
func SchemaOf(v any) string {
	b, _ := json.Marshal(schemaOf(reflect.TypeOf(v)))
	return string(b)
}

func schemaOf(t reflect.Type) map[string]any {
	if t == nil {
		return map[string]any{"type": "object"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaOf(t.Elem())
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case reflect.Struct:
		return structSchema(t)
	}
	return map[string]any{}
}

func structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	required := []string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s := schemaOf(f.Type)
		if d := f.Tag.Get("desc"); d != "" {
			s["description"] = d
		}
		props[name] = s
		if f.Type.Kind() != reflect.Pointer && !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required,
		"additionalProperties": false}
}
