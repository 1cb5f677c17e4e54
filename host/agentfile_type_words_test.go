package host

import (
	"strings"
	"testing"
)

// A value of the wrong kind in an agent file was refused in the words of
// the Go types cairn decodes into: "cannot unmarshal !!str `builtin` into
// []host.ToolRef". It is refused saying what the key wants and what it
// found, at its line.
func TestAgentFileValueOfTheWrongKindSaysWhatItWants(t *testing.T) {
	const head = "name: a\nmodel: {provider: script}\n"
	const tools = "tools: [{module: builtin}]\n"
	for src, want := range map[string]string{
		head + "tools: builtin\n":                                 "line 3: want a list, found `builtin`",
		head + "tools: [builtin]\n":                               "line 3: want a mapping of the keys grant, limits, module, only, found `builtin`",
		head + tools + "limits: {max_rounds: many}\n":             "line 4: want a whole number, found `many`",
		head + tools + "sandbox: 5\n":                             "line 4: want a mapping of the keys files, memory, output",
		head + "tools: [{module: builtin, grant: {env: HOME}}]\n": "line 3: want a list, found `HOME`",
		"- name\n- model\n":                                       "line 1: want a mapping of the keys agents, approvals",
		head + tools + "todos: maybe\n":                           "line 4: want true or false, found `maybe`",
	} {
		_, err := ParseAgentFile([]byte(src), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "unmarshal") || strings.Contains(err.Error(), "host.") {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
