package model

import (
	"strings"
	"testing"
)

// A mistyped key in a script is named as a key, with the key meant, not
// in the words of the Go type a turn decodes into.
func TestScriptUnknownKeysNamed(t *testing.T) {
	_, err := ParseScript([]byte("turns:\n  - tool_call: [{name: read_file}]\n"))
	if err == nil || !strings.Contains(err.Error(), `line 2: unknown key "tool_call" (did you mean "tool_calls"?)`) ||
		strings.Contains(err.Error(), "scriptTurn") {
		t.Fatalf("got %v", err)
	}
}
