package main

import (
	"strings"
	"testing"
)

// --max-cost NaN (or Inf) was taken as a raise, and a NaN limit is never
// reached. It is refused, as a negative one is, before the agent is read.
func TestMaxCostThatIsNotANumberIsRefused(t *testing.T) {
	for v, says := range map[string]string{"NaN": "NaN", "Inf": "+Inf"} {
		code, _, errOut := cairn(t, "resume", "someone", "--max-cost", v, "--store", t.TempDir())
		if code != exitUsage || !strings.Contains(errOut, "--max-cost "+says+": want US dollars, 0 or more") {
			t.Errorf("--max-cost %s: exit %d, stderr %s", v, code, errOut)
		}
	}
}
