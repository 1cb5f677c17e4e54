package main

import (
	"strings"
	"testing"
)

// A duration flag past what cairn counts was refused as a "parse error",
// naming neither what it was nor the longest allowed. It is refused, exit
// 2, naming the longest; what is no duration at all is refused saying
// what a duration is.
func TestDurationFlagTooLongNamesTheLongest(t *testing.T) {
	const longest = "2562047h47m16.854775807s"
	for _, args := range [][]string{
		{"exec", "--timeout", "9999999h", "prog.wasm"},
		{"resume", "--store", t.TempDir(), "--max-time", "9999999h", "a"},
		{"workflow", "resume", "--store", t.TempDir(), "--max-time", "99999999999999999999s", "w"},
	} {
		code, out, errOut := cairn(t, args...)
		if code != exitUsage || !strings.Contains(errOut, args[len(args)-2]) || !strings.Contains(errOut, "the longest is "+longest) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 naming the longest, %s", strings.Join(args, " "), code, out, errOut, longest)
		}
	}
	code, _, errOut := cairn(t, "exec", "--timeout", "1x", "prog.wasm")
	if code != exitUsage || !strings.Contains(errOut, `"1x"`) || !strings.Contains(errOut, "1m30s") {
		t.Errorf("exec --timeout 1x: exit %d, stderr %q", code, errOut)
	}
}
