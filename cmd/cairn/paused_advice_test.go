package main

import (
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host"
)

// Regression: an agent stopped before its first prompt was journaled
// paused on resume with "nothing to ask the model: … give it a prompt
// with `cairn run --id v PROMPT`", and the command added "continue with
// `cairn resume v`", which would only stop there again. A reason that
// names the command that goes on is said alone.
func TestPausedReasonNamingItsCommandIsSaidAlone(t *testing.T) {
	for _, reason := range []string{
		"nothing to ask the model: the agent has no conversation yet; give it a prompt with `cairn run --id v PROMPT`",
		"its turns come from an MCP client: `cairn mcp --id v` goes on",
	} {
		err := statusError(&host.Result{Agent: "v", Status: host.StatusPaused, Reason: reason})
		if err == nil || strings.Contains(err.Error(), "cairn resume v") || !strings.HasSuffix(err.Error(), reason) {
			t.Errorf("paused with %q: %v; want the reason alone", reason, err)
		}
	}
	err := statusError(&host.Result{Agent: "v", Status: host.StatusPaused, Reason: "paused on request"})
	if err == nil || !strings.Contains(err.Error(), "continue with `cairn resume v`") {
		t.Errorf("paused on request: %v; want the resume that continues it", err)
	}
}
