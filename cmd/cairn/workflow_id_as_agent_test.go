package main

import (
	"strings"
	"testing"
)

// Regression: `cairn resume ID`, `cairn show ID` and `cairn log ID` of a
// workflow's id said only that no agent has that id, as if nothing were
// stored under it. They say it is a workflow and which command to use.
func TestWorkflowIDGivenAsAnAgent(t *testing.T) {
	store := t.TempDir()
	flags := []string{"--store", store, "--cache", cacheForTests(t)}
	if code, out, errOut := cairn(t, append([]string{"workflow", "run", "--id", "wf", "--workspace", flowWorkspace(t), exampleFlow}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	for _, tc := range []struct {
		cmd  string
		want string
	}{
		{"resume", "cairn workflow resume wf"},
		{"show", "cairn workflow show wf"},
		{"log", "cairn workflow show wf"},
	} {
		args := []string{tc.cmd, "wf", "--store", store}
		if tc.cmd == "resume" {
			args = append(args, "--cache", cacheForTests(t))
		}
		code, _, errOut := cairn(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "not found") || !strings.Contains(errOut, "is a workflow") || !strings.Contains(errOut, tc.want) {
			t.Errorf("cairn %s wf: exit %d, %s; want exit %d saying wf is a workflow, naming `%s`", tc.cmd, code, errOut, exitUsage, tc.want)
		}
	}
}
