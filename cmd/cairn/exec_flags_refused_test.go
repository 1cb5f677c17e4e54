package main

import (
	"strings"
	"testing"
)

// exec --timeout -1s was taken as 0, never, where a negative --max-time
// is refused; it is refused too, before the module is read.
func TestExecNegativeTimeoutIsRefused(t *testing.T) {
	code, _, errOut := cairn(t, "exec", "--timeout", "-1s", "m.wasm")
	if code != exitUsage || !strings.Contains(errOut, "--timeout -1s: want a duration, 0 or more (0: never)") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
}

// Regression: `cairn exec --memory 0` was taken without a word, and ran
// the module under the default limit of 256 MiB.
func TestExecMemoryOfZeroIsRefused(t *testing.T) {
	code, _, errOut := cairn(t, "exec", "--memory", "0", "m.wasm")
	if code != exitUsage || !strings.Contains(errOut, "--memory 0: a module needs memory; give a size such as 64MiB, or leave the flag out for 256MiB") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
}
