package host

import (
	"strings"
	"testing"
)

// contextFile is an agent file whose context section is section, written
// a key a line from line 5 on.
func contextFile(section ...string) []byte {
	src := "name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\ncontext:\n"
	for _, s := range section {
		src += "  " + s + "\n"
	}
	return []byte(src)
}

// Regression: a value of the context section that is not allowed was
// refused without a line, though an unknown key and a budget too small for
// the tools name theirs.
func TestContextInvalidValueNamesItsLine(t *testing.T) {
	for _, c := range []struct {
		section []string
		want    string
	}{
		{[]string{"budget: -5"}, "line 5: context: budget -5 is below"},
		{[]string{"budget: 8000", "policy: summarise"}, `line 6: context: policy "summarise"`},
		{[]string{"budget: 8000", "keep_turns: -1"}, "line 6: context: keep_turns cannot be negative"},
		{[]string{"budget: 8000", "max_tool_result: 10"}, "line 6: context: max_tool_result 10: want between"},
		{[]string{"policy: drop", "max_tool_result: -3", "budget: 8000"}, "line 6: context: max_tool_result -3: want between"},
	} {
		_, err := ParseAgentFile(contextFile(c.section...), t.TempDir())
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("context %v: %v; want an error that starts %q", c.section, err, c.want)
		}
	}
}
