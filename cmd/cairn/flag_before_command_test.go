package main

import (
	"strings"
	"testing"
)

// `cairn --store DIR ls`, a command's flag typed before the command, was
// refused as `no command "DIR"`, the flag's value taken for a command's
// name. It is refused saying the flag goes after the command, as the
// command would take it.
func TestFlagBeforeTheCommandSaysWhereItGoes(t *testing.T) {
	store := t.TempDir()
	code, out, errOut := cairn(t, "--store", store, "ls")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "cairn ls --store "+store) || strings.Contains(errOut, "no command") {
		t.Errorf("cairn --store DIR ls: exit %d, stdout %q, stderr %q; want exit 2 showing cairn ls --store DIR", code, out, errOut)
	}
	code, _, errOut = cairn(t, "--cache", store, "tools", "gc")
	if code != exitUsage || !strings.Contains(errOut, "cairn tools gc --cache "+store) {
		t.Errorf("cairn --cache DIR tools gc: exit %d, stderr %q; want exit 2 showing cairn tools gc --cache DIR", code, errOut)
	}
	code, _, errOut = cairn(t, "nosuch")
	if code != exitUsage || !strings.Contains(errOut, `no command "nosuch"`) {
		t.Errorf("cairn nosuch: exit %d, stderr %q", code, errOut)
	}
}
