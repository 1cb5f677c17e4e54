package host

import (
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host/model"
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

// Regression: a budget of 0 written in the file, or a section with no
// budget at all, ran the agent with no bound and said nothing; with a
// policy, an explicit 0 was said to be missing. Either is refused at its
// line.
func TestContextBudgetZeroIsRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		want string
	}{
		{"budget 0", string(contextFile("budget: 0")), "line 5: context: budget 0: at least 256, or leave out the section"},
		{"budget 0 with a policy", string(contextFile("policy: drop", "budget: 0")), "line 6: context: budget 0: at least 256, or leave out the section"},
		{"empty section", "name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\ncontext: {}\n", "line 4: context: budget is missing"},
		{"section of nothing", "name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\ncontext:\n", "line 4: context: budget is missing"},
		{"no budget", string(contextFile("policy: drop")), "line 4: context: budget is missing"},
	} {
		_, err := ParseAgentFile([]byte(c.src), t.TempDir())
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !strings.Contains(err.Error(), "leave out the section") {
			t.Errorf("%s: %v; want an error that starts %q and says the section may be left out", c.name, err, c.want)
		}
	}
	// No section, or one in a file made in code, is no bound.
	if _, err := ParseAgentFile([]byte("name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\n"), t.TempDir()); err != nil {
		t.Fatalf("no section: %v", err)
	}
	if err := (&AgentFile{Name: "a", Model: model.Spec{Provider: "script"}, Tools: []ToolRef{{Module: "builtin"}}}).Validate(); err != nil {
		t.Fatalf("made in code, no section: %v", err)
	}
}
