package host

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// An approval rule's path pattern is matched against the path a call
// reaches, not only its spelling: "drafts/../notes.txt" once passed
// README's `allow write_file drafts/**` and wrote notes.txt, which the
// next rule says to ask about; "x/../secret/c.txt" escaped an ask rule
// for secret/**.
func TestApprovalRuleMatchesThePathACallReaches(t *testing.T) {
	readme := []Rule{
		{Tool: "write_file", Args: map[string]string{"path": "drafts/**"}, Action: ActionAllow},
		{Tool: "write_file", Action: ActionAsk},
	}
	secret := []Rule{
		{Tool: "write_file", Args: map[string]string{"path": "secret/**"}, Action: ActionAsk},
		{Tool: "write_file", Args: map[string]string{"path": "**/../**"}, Action: ActionDeny},
	}
	urls := []Rule{
		{Tool: "fetch", Args: map[string]string{"url": "https://api.example.com/v1/**"}, Action: ActionAllow},
		{Tool: "fetch", Action: ActionDeny},
	}
	for _, tc := range []struct {
		rules []Rule
		tool  string
		input string
		want  Action
		rule  int
	}{
		{readme, "write_file", `{"path":"drafts/a.txt"}`, ActionAllow, 0},
		{readme, "write_file", `{"path":"drafts/./a.txt"}`, ActionAllow, 0},
		{readme, "write_file", `{"path":"drafts/../notes.txt"}`, ActionAsk, 1},
		{readme, "write_file", `{"path":"drafts/../../etc/passwd"}`, ActionAsk, 1},
		{readme, "write_file", `{"path":"notes.txt"}`, ActionAsk, 1},
		{secret, "write_file", `{"path":"secret/a.txt"}`, ActionAsk, 0},
		{secret, "write_file", `{"path":"./secret/a.txt"}`, ActionAsk, 0},
		{secret, "write_file", `{"path":"x/../secret/c.txt"}`, ActionAsk, 0},
		{secret, "write_file", `{"path":"secret//b.txt"}`, ActionAsk, 0},
		// A deny still holds for the text as written.
		{secret, "write_file", `{"path":"a/../b.txt"}`, ActionDeny, 1},
		{secret, "write_file", `{"path":"b.txt"}`, ActionAllow, -1},
		{urls, "fetch", `{"url":"https://api.example.com/v1/items?q=a/../b"}`, ActionAllow, 0},
		{urls, "fetch", `{"url":"https://api.example.com/v1/../admin"}`, ActionDeny, 1},
	} {
		c := conversation.ToolCall{ID: "c", Name: tc.tool, Input: tc.input}
		if got, rule := decide(tc.rules, c); got != tc.want || rule != tc.rule {
			t.Errorf("%s %s: %s by rule %d, want %s by rule %d", tc.tool, tc.input, got, rule, tc.want, tc.rule)
		}
	}
}

func TestResolvedPath(t *testing.T) {
	for in, want := range map[string]string{
		"a/b":                    "a/b",
		"a/./b/":                 "a/b/",
		"a//b":                   "a/b",
		"a/../../b":              "../b",
		"/w/x/../y":              "/w/y",
		".":                      ".",
		"":                       "",
		"http://h":               "http://h",
		"http://h/a/../b?x=/../": "http://h/b?x=/../",
	} {
		if got := resolvedPath(in); got != want {
			t.Errorf("resolvedPath(%q) = %q, want %q", in, got, want)
		}
	}
}
