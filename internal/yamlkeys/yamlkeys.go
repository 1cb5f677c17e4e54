// Package yamlkeys words yaml.v3's error for a key no Go field takes
// ("field tool not found in type host.AgentFile") as a person editing the
// file reads it: `unknown key "tool" (did you mean "tools"?)`, and its
// error for a value of the wrong kind ("cannot unmarshal !!str `x` into
// []host.ToolRef") as "want a list, found `x`"; and it finds
// a second document that a decoder leaves out. The agent file, the
// workflow file and the script model's file share it.
package yamlkeys

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// unknownKeyRE is how yaml.v3 words a key that no field takes.
var unknownKeyRE = regexp.MustCompile(`field (\S+) not found in type (\S+)`)

// Friendly rewords err's unknown keys, known from the Go types reachable
// from root, which the file was decoded into; its other errors, and an
// error that is no *yaml.TypeError, are returned as they are.
func Friendly(err error, root reflect.Type) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	keys := yamlKeys(root)
	lines := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		e = unknownKeyRE.ReplaceAllStringFunc(e, func(m string) string {
			sub := unknownKeyRE.FindStringSubmatch(m)
			return unknownKey(sub[1], keys[sub[2]])
		})
		lines[i] = wrongKindRE.ReplaceAllStringFunc(e, func(m string) string {
			sub := wrongKindRE.FindStringSubmatch(m)
			if w := wrongKind(sub[1], sub[2], sub[3], keys); w != "" {
				return w
			}
			return m
		})
	}
	return errors.New(strings.Join(lines, "; "))
}

// wrongKindRE is how yaml.v3 words a value of a kind the Go type it is
// decoded into cannot take: its tag, its text for a scalar, and the type.
var wrongKindRE = regexp.MustCompile("cannot unmarshal !!(\\w+)(?: `([^`]*)`)? into (\\S+)")

// wrongKind says what a key of the Go type typ wants, and what it found:
// a value tagged tag, whose text is value; "" for a type whose kind has
// no plain word (one that reads itself), left as yaml.v3 words it.
func wrongKind(tag, value, typ string, keys map[string][]string) string {
	want := ""
	switch {
	case strings.HasPrefix(typ, "[]"):
		want = "a list"
	case strings.HasPrefix(typ, "map["):
		want = "a mapping"
	case typ == "bool":
		want = "true or false"
	case typ == "string":
		want = "text"
	case strings.HasPrefix(typ, "int") || strings.HasPrefix(typ, "uint"):
		want = "a whole number"
	case strings.HasPrefix(typ, "float"):
		want = "a number"
	default:
		known, ok := keys[typ]
		if !ok {
			return ""
		}
		want = "a mapping of the keys " + strings.Join(known, ", ")
	}
	found := "`" + value + "`"
	switch tag {
	case "seq":
		found = "a list"
	case "map":
		found = "a mapping"
	case "null":
		found = "nothing"
	}
	return "want " + want + ", found " + found
}

// unknownKey says key is unknown, with the nearest of known if one is near.
func unknownKey(key string, known []string) string {
	msg := `unknown key "` + key + `"`
	best, dist := "", 3
	for _, k := range known {
		if d := editDistance(key, k); d < dist {
			best, dist = k, d
		}
	}
	if best != "" {
		return msg + ` (did you mean "` + best + `"?)`
	}
	if len(known) > 0 {
		return msg + " (known here: " + strings.Join(known, ", ") + ")"
	}
	return msg
}

// yamlKeys maps each struct type reachable from t, by the name yaml gives
// it in errors, to the keys it takes.
func yamlKeys(t reflect.Type) map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		if _, seen := out[t.String()]; seen {
			return
		}
		out[t.String()] = nil
		var keys []string
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if strings.Contains(opts, "inline") {
				walk(f.Type)
				keys = append(keys, out[f.Type.String()]...)
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			keys = append(keys, name)
			walk(f.Type)
		}
		slices.Sort(keys)
		out[t.String()] = keys
	}
	walk(t)
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// SecondDocument reports whether data holds a YAML document after its
// first that is not empty: what a decoder of the first leaves out without
// a word. line is where it starts (0 when it does not decode). A ---
// that ends the data, or comments after it, is no document; data whose
// first document does not decode has none (its decoder says what is
// wrong).
func SecondDocument(data []byte) (line int, found bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first, next yaml.Node
	if dec.Decode(&first) != nil {
		return 0, false
	}
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
		return 0, false
	case err != nil:
		return 0, true
	case len(next.Content) == 0 || next.Content[0].Kind == yaml.ScalarNode && next.Content[0].Tag == "!!null" && next.Content[0].Value == "":
		return 0, false
	}
	return next.Line, true
}
