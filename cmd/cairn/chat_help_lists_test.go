package main

import (
	"regexp"
	"strings"
	"testing"
)

// Regression: `cairn chat --help` listed the slash commands without
// /events, which a chat runs and its /help lists. Its help names every
// command /help names.
func TestChatHelpNamesEverySlashCommand(t *testing.T) {
	code, help, errOut := cairn(t, "chat", "--help")
	if code != exitDone {
		t.Fatalf("cairn chat --help: exit %d, %s", code, errOut)
	}
	code, _, errOut = cairnIn(t, "/help\n", "chat", "-f", "../../examples/hello/agent.yaml", "--workspace", t.TempDir(),
		"--store", t.TempDir(), "--cache", cacheForTests(t))
	listed := regexp.MustCompile(`/[a-z]+`).FindAllString(errOut[strings.Index(errOut, "commands:"):], -1)
	if code != exitDone || len(listed) < 10 {
		t.Fatalf("/help in a chat: exit %d, %q", code, errOut)
	}
	for _, name := range listed {
		if !regexp.MustCompile(regexp.QuoteMeta(name) + `\b`).MatchString(help) {
			t.Errorf("/help names %s, which cairn chat --help does not:\n%s", name, help)
		}
	}
}
