package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CheckToolInput checks input, the JSON arguments of a call of af's tool
// named tool, against that tool's input schema, as the call itself will be
// checked, without running anything. A caller that makes the call later
// (a workflow's tool step) refuses with it, before anything has run, an
// input that could never be taken.
//
// pending are the places in input, as JSON pointers ("/path", "/items/0"),
// of strings whose text is known only when the call is made (a workflow's
// templates, which expand to text). An error that could be their text's is
// left to the call: only what is literal is checked (keys the schema does
// not allow, keys it requires that are not there, literal values of the
// wrong type, ...), and that a pending value is a string: one at a place
// whose schema takes no string (type: integer, say) is refused now, as no
// text would pass. A pending value the schema refuses for its text (an
// enum, a pattern) is tried as a number, a boolean, null, an object and an
// array in turn, so that the check goes on to the rest; one that none of
// them passes is left to the call.
//
// # Errors
//
// What CheckTools returns, when the tool's module cannot be read, and
// errors.Is ErrArguments when the input does not match the schema, saying
// where and how: a *PendingTypeError for a pending value where the schema
// takes no string. ArgumentsPlace says where.
func CheckToolInput(af *AgentFile, tool, input string, pending []string) error {
	ts, _, err := checkedToolset(af)
	if err != nil {
		return err
	}
	t, ok := ts.tools[tool]
	if !ok {
		return fmt.Errorf("no tool %q", tool)
	}
	return checkPending(t.schema, input, pending)
}

// pendingStandIns are the values a pending value is tried as, in turn,
// when the schema refuses it as it is written, so that the check goes on
// past it to the literal rest of the input.
var pendingStandIns = []any{0, 0.5, false, nil, map[string]any{}, []any{}}

// checkPending checks input against sch, trying each pending value that
// the schema refuses as each of pendingStandIns until the schema takes it
// or refuses something literal. A pending value that no stand-in passes,
// or an error above one, is left to the call.
func checkPending(sch *schema, input string, pending []string) error {
	_, err := sch.check(input)
	if err == nil || len(pending) == 0 || !errors.Is(err, errArguments) {
		return err
	}
	var inst any
	if json.Unmarshal([]byte(input), &inst) != nil {
		return err
	}
	// A place whose types take no text, by an anyOf or a oneOf none of
	// whose schemas does, say, refuses a pending value that a stand-in
	// passes: it is refused once the stand-ins let the literal rest pass.
	var noText *PendingTypeError
	for _, p := range pending {
		if why := sch.textRefused(inst, p); why != "" {
			noText = &PendingTypeError{Place: p, Msg: why}
			break
		}
	}
	if err := tryStandIns(sch, inst, err, pending); err != nil || noText == nil {
		return err
	}
	return noText
}

// tryStandIns tries each pending value in inst, which err says sch
// refuses, as each of pendingStandIns (see checkPending).
func tryStandIns(sch *schema, inst any, err error, pending []string) error {
	tried := map[string]int{}
	for {
		var verr *schemaError
		if !errors.As(err, &verr) {
			return nil
		}
		p, ok := verr.pendingAt(pending)
		if ok && tried[p] == 0 && verr.typeAt(p) {
			return &PendingTypeError{Place: p, Msg: verr.msg}
		}
		if !ok {
			if verr.couldBe(pending) {
				return nil
			}
			return err
		}
		if tried[p] == len(pendingStandIns) || !setAt(&inst, pointerSegments(p), pendingStandIns[tried[p]]) {
			return nil
		}
		tried[p]++
		b, merr := json.Marshal(inst)
		if merr != nil {
			return nil
		}
		if _, err = sch.check(string(b)); err == nil {
			return nil
		}
	}
}

// PendingTypeError: a value known only when the call is made, a string, is
// at a place whose input schema takes no string, so no text it could have
// would pass. It matches ErrArguments.
type PendingTypeError struct {
	// Place is its place in the input, a JSON pointer; Msg what the
	// schema says of the value as written.
	Place, Msg string
}

func (e *PendingTypeError) Error() string {
	return fmt.Sprintf("%v: they do not match the input schema: at %s: its value is text known only when the call is made, "+
		"and the schema takes no text there (%s)", errArguments, e.Place, e.Msg)
}

func (e *PendingTypeError) Is(target error) bool { return target == errArguments }

// ArgumentsPlace is where in a call's input err, of CheckToolInput, says
// it does not match the tool's input schema, as a JSON pointer ("/items/*/name":
// "*" for any item); "" when err says no place in the input.
func ArgumentsPlace(err error) string {
	var pt *PendingTypeError
	if errors.As(err, &pt) {
		return pt.Place
	}
	var se *schemaError
	if !errors.As(err, &se) || strings.HasPrefix(se.where, "schema ") || se.where == "root" {
		return ""
	}
	return se.where
}

// typeAt says whether the error is the schema's type check of the value at
// the place p itself.
func (e *schemaError) typeAt(p string) bool {
	kw, _, _ := strings.Cut(e.msg, ":")
	at, want := pointerSegments(e.where), pointerSegments(p)
	return kw == "type" && len(at) == len(want) && segmentsPrefix(at, want)
}

// pendingAt is the pending place the error is at or under, if any.
func (e *schemaError) pendingAt(pending []string) (string, bool) {
	if strings.HasPrefix(e.where, "schema ") {
		return "", false
	}
	at := pointerSegments(e.where)
	for _, p := range pending {
		if segmentsPrefix(pointerSegments(p), at) {
			return p, true
		}
	}
	return "", false
}

// setAt sets the value at the place segs in *v, a decoded JSON value, to
// to, and says whether there was a value there.
func setAt(v *any, segs []string, to any) bool {
	if len(segs) == 0 {
		*v = to
		return true
	}
	switch x := (*v).(type) {
	case map[string]any:
		c, ok := x[segs[0]]
		if ok && setAt(&c, segs[1:], to) {
			x[segs[0]] = c
			return true
		}
	case []any:
		if i, err := strconv.Atoi(segs[0]); err == nil && i >= 0 && i < len(x) {
			return setAt(&x[i], segs[1:], to)
		}
	}
	return false
}

// ErrArguments: a call's arguments do not match its tool's input schema.
var ErrArguments = errArguments

// couldBe says whether an error that is at no pending place could still
// be that of a pending value: it is a check of more than a value's own
// type and keys (anyOf, enum, a pattern, ...) above one, or one the
// validator gives no place in the arguments for.
func (e *schemaError) couldBe(pending []string) bool {
	if strings.HasPrefix(e.where, "schema ") {
		return true
	}
	kw, _, _ := strings.Cut(e.msg, ":")
	if kw == "type" || kw == "required" || strings.HasPrefix(kw, "dependentRequired") ||
		strings.HasPrefix(kw, "unexpected additional properties") {
		return false
	}
	at := pointerSegments(e.where)
	for _, p := range pending {
		if segmentsPrefix(at, pointerSegments(p)) {
			return true
		}
	}
	return false
}

// pointerSegments are the segments of a JSON pointer; none for the root.
func pointerSegments(p string) []string {
	if p == "" || p == "/" || p == "(root)" {
		return nil
	}
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}

// PlaceHolds says whether the JSON pointer outer ("" for the whole input)
// is the place inner, or holds it; "*" in either is any item, as in
// ArgumentsPlace.
func PlaceHolds(outer, inner string) bool {
	return segmentsPrefix(pointerSegments(outer), pointerSegments(inner))
}

// segmentsPrefix says whether the place prefix is the place of, or holds,
// the place of; "*" in either is any item.
func segmentsPrefix(prefix, of []string) bool {
	if len(prefix) > len(of) {
		return false
	}
	for i, s := range prefix {
		if s != of[i] && s != "*" && of[i] != "*" {
			return false
		}
	}
	return true
}
