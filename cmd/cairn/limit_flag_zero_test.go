package main

import (
	"strings"
	"testing"
)

// Regression: `cairn resume A --max-time 0` (or --max-rounds, --max-tokens,
// --max-cost 0, or -0) was taken and raised nothing, so the agent paused
// again by the limit it was resumed to raise, and a user who meant "no
// limit" was not told. A limit flag of 0 exits 2 saying to give one above
// 0, before the agent is touched; so does a workflow's resume.
func TestLimitFlagOfZeroIsRefused(t *testing.T) {
	for _, tt := range []struct{ args, flag string }{
		{"resume A --max-time 0", "--max-time"}, {"resume A --max-time=0s", "--max-time"},
		{"resume A --max-rounds 0", "--max-rounds"}, {"resume A --max-tokens=0", "--max-tokens"},
		{"resume A --max-cost 0", "--max-cost"}, {"resume A --max-cost -0", "--max-cost"},
		{"workflow resume W --max-time 0", "--max-time"},
	} {
		code, out, errOut := cairn(t, append(strings.Fields(tt.args), "--store", t.TempDir())...)
		want := tt.flag + " 0 raises no limit: give one above 0"
		if code != exitUsage || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and stderr saying %q", tt.args, code, out, errOut, want)
		}
	}
}
