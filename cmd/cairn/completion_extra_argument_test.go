package main

import (
	"strings"
	"testing"
)

// Regression: `cairn completion bash extra` printed the bash script, the
// argument after the shell left out without a word. It is refused with
// exit 2, naming it, and prints nothing.
func TestCompletionRefusesAnArgumentAfterTheShell(t *testing.T) {
	for _, args := range [][]string{
		{"completion", "bash", "extra"},
		{"completion", "zsh", "bash"},
	} {
		code, out, errOut := cairn(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, `"`+args[2]+`"`) || !strings.Contains(errOut, "bash|zsh") {
			t.Errorf("cairn %q: exit %d, stdout %d bytes, stderr %q; want exit 2 naming %q", args, code, len(out), errOut, args[2])
		}
	}
	if code, out, errOut := cairn(t, "completion", "zsh"); code != exitDone || !strings.Contains(out, "compdef _cairn_complete cairn") {
		t.Errorf("cairn completion zsh: exit %d, %q", code, errOut)
	}
}
