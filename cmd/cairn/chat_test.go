package main

import (
	"bytes"
	"strings"
	"testing"
)

// cairnIn runs the command line with stdin.
func cairnIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := doMain(append([]string{"cairn"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// A chat runs each line as a prompt and each /command on its agent; a
// later chat with --id goes on with the same conversation.
func TestChatPicksUpTheConversation(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	code, out, errOut := cairnIn(t, "Summarise the notes\n/diff\n/undo\n/nosuch\n/ls\n", append([]string{"chat", "--id", "talk"}, args...)...)
	if code != exitDone {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"agent talk · run", "done after 5 rounds", "write REPORT.md (call_4_0)", "undid round 4", "\ntalk ", "AGENT  STATUS"} {
		if !strings.Contains(out, want) {
			t.Errorf("first chat's output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "a new conversation") || !strings.Contains(errOut, "no command /nosuch") {
		t.Errorf("first chat's stderr: %s", errOut)
	}

	code, out, errOut = cairnIn(t, "And now?\n/log\n", "chat", "--id", "talk", "--store", store, "--cache", cacheForTests(t))
	if code != exitDone || !strings.Contains(errOut, "going on with its conversation") {
		t.Fatalf("second chat: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"done after 6 rounds", "user: Summarise the notes", "user: And now?"} {
		if !strings.Contains(out, want) {
			t.Errorf("second chat's output lacks %q:\n%s", want, out)
		}
	}
}

func TestChatUsage(t *testing.T) {
	code, _, errOut := cairnIn(t, "", "chat")
	if code != exitUsage || !strings.Contains(errOut, "chat needs an agent file or the id") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
