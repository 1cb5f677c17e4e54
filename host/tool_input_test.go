package host

import (
	"errors"
	"testing"
)

// CheckToolInput refuses what is literal in a call's input and leaves to
// the call what a value known only then could make: the values at the
// places pending names, and an anyOf, enum or pattern above them.
func TestCheckToolInputLeavesPendingValues(t *testing.T) {
	af, err := ParseAgentFile([]byte("name: t\nmodel: {provider: script}\ntools: [{module: builtin, only: [read_file]}]\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, input string
		pending     []string
		refused     bool
	}{
		{"literal input that matches", `{"path":"a"}`, nil, false},
		{"unknown key", `{"path":"a","lines":3}`, nil, true},
		{"unknown key beside a pending value", `{"path":"{{x}}","lines":3}`, []string{"/path"}, true},
		{"required key missing beside a pending value", `{"limit":"{{x}}"}`, []string{"/limit"}, true},
		{"literal of the wrong type", `{"path":"a","limit":"many"}`, nil, true},
		{"pending value where a string is wanted", `{"path":"{{x}}"}`, []string{"/path"}, false},
	} {
		err := CheckToolInput(af, "read_file", tc.input, tc.pending)
		if tc.refused != (err != nil) || (err != nil && !errors.Is(err, ErrArguments)) {
			t.Errorf("%s: got %v; want refused %v, with ErrArguments", tc.name, err, tc.refused)
		}
	}
}

// Regression: a pending value, text known only when the call is made (a
// workflow's template), at a place whose schema takes no string was left
// to the call, where it was always refused, after every step before it had
// run. It is refused now, as a *PendingTypeError that names its place.
func TestCheckToolInputRefusesPendingTextWhereNoStringIsTaken(t *testing.T) {
	af, err := ParseAgentFile([]byte("name: t\nmodel: {provider: script}\ntools: [{module: builtin, only: [read_file]}]\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ input, place string }{
		{`{"path":"a","limit":"{{x}}"}`, "/limit"},
		{`"{{x}}"`, ""},
	} {
		err := CheckToolInput(af, "read_file", tc.input, []string{tc.place})
		var pt *PendingTypeError
		if !errors.As(err, &pt) || !errors.Is(err, ErrArguments) || ArgumentsPlace(err) != tc.place {
			t.Errorf("%s: got %v; want a PendingTypeError at %q", tc.input, err, tc.place)
		}
	}
}
