package host

import (
	"strings"
	"testing"
)

// Regression: a mistyped key in an agent file was refused in the words of
// the Go types it decodes into ("field tool not found in type
// host.AgentFile"); it is named as a key, on its line, with the key meant.
func TestAgentFileUnknownKeysNamed(t *testing.T) {
	_, err := ParseAgentFile([]byte(`name: t
model: {provider: script, script: s.yaml, nme: x}
tool: [{module: builtin}]
limits: {max_round: 3}
sandbox: {zzz: 1}
`), t.TempDir())
	if err == nil {
		t.Fatal("an agent file of unknown keys was taken")
	}
	msg := err.Error()
	for _, want := range []string{
		`line 2: unknown key "nme" (did you mean "name"?)`,
		`line 3: unknown key "tool" (did you mean "tools"?)`,
		`line 4: unknown key "max_round" (did you mean "max_rounds"?)`,
		`line 5: unknown key "zzz" (known here: `,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "host.") || strings.Contains(msg, "model.") {
		t.Errorf("the error names Go types: %s", msg)
	}
}
