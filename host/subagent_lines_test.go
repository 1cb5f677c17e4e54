package host

import (
	"errors"
	"strings"
	"testing"
)

// Regression: an error in an inline sub-agent's definition named a line
// of the definition written out anew, not of the file: max_rounds: "lots"
// on line 16 was said to be on line 9, and an unknown key on line 12 on
// line 5. Now the line is the file's, for a sub-agent of a sub-agent too,
// and a definition in flow style still reads.
func TestSubAgentInlineErrorNamesTheFilesLine(t *testing.T) {
	const head = `name: p
model: {provider: script, script: s.yaml}
workspace: ws
tools:
  - module: builtin
agents:
`
	cases := []struct{ name, agents, want string }{
		{"a value", `  - name: kid
    description: k
    system: |
      line one
      line two
      line three
    model: {provider: script, script: s.yaml}
    tools:
      - module: builtin
    limits: {max_rounds: "lots"}
`, "line 7: sub-agent kid: line 16: want a whole number, found `lots`"},
		{"an unknown key", `  - name: kid
    description: k
    model: {provider: script, script: s.yaml}
    tools:
      - module: builtin
    bogus_key: 1
  - name: other
    description: dup
    file: x.yaml
`, `line 7: sub-agent kid: line 12: unknown key "bogus_key"`},
		{"a sub-agent's sub-agent", `  - description: >
      a kid
      that delegates
    name: kid
    model: {provider: script, script: s.yaml}
    tools: [{module: builtin}]
    agents:
      - name: grandkid
        description: g
        model: {provider: script, script: s.yaml}
        tools: [{module: builtin}]
        sandbox: {timeout: soon}
`, `line 14: sub-agent grandkid: line 18: "soon" is no duration`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := inlineRefusal(t, head+tc.agents)
			if !errors.Is(err, ErrSubAgent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want ErrSubAgent saying %q", err, tc.want)
			}
		})
	}
	flow := head + "  - {name: kid, description: k, model: {provider: script, script: s.yaml}, tools: [{module: builtin}]}\n"
	if err := inlineRefusal(t, flow); err != nil {
		t.Fatalf("a definition in flow style: %v", err)
	}
}

// inlineRefusal is what resolving the sub-agent kid of the agent file src,
// and kid's own sub-agents, says.
func inlineRefusal(t *testing.T, src string) error {
	t.Helper()
	af, err := ParseAgentFile([]byte(src), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	kid, err := af.SubAgentFile("kid")
	if err != nil {
		return err
	}
	for _, s := range kid.Agents {
		if _, err := s.resolve(kid); err != nil {
			return err
		}
	}
	return nil
}
