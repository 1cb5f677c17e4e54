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

// Regression: `cairn --store DIR --json ls`, two flags typed before the
// command, was refused as `no command "DIR"`, and `cairn --json ls` as a
// flag cairn does not define. Any number of a command's flags typed before
// it is refused showing where they go, or naming the one it does not take.
func TestFlagsBeforeTheCommandSayWhereTheyGo(t *testing.T) {
	store := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", store, "--json", "ls"}, "--store " + store + " --json go after the command they belong to: cairn ls --store " + store + " --json"},
		{[]string{"--json", "--store", store, "ls"}, "cairn ls --json --store " + store},
		{[]string{"--json", "ls"}, "--json goes after the command it belongs to: cairn ls --json"},
		{[]string{"--store=" + store, "--json", "show", "a"}, "cairn show --store=" + store + " --json"},
		{[]string{"--cache", store, "--json", "--cache-max", "1GiB", "tools", "gc"}, "cairn tools gc --cache " + store + " --json --cache-max 1GiB"},
		{[]string{"--store", store, "--help", "ls"}, "cairn ls --store " + store + " --help"},
		{[]string{"--id", "ls", "run", "-f", "agent.yaml"}, "--id ls goes after the command it belongs to: cairn run --id ls"},
		{[]string{"--store", store, "--nosuch", "ls"}, "a flag goes after the command it belongs to, and cairn ls takes no --nosuch"},
	} {
		code, out, errOut := cairn(t, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "no command") {
			t.Errorf("cairn %q: exit %d, stdout %q, stderr %q; want exit 2 saying %s", c.args, code, out, errOut, c.want)
		}
	}
	if code, out, _ := cairn(t, "--help", "ls"); code != exitDone || !strings.Contains(out, "cairn ls") {
		t.Errorf("cairn --help ls: exit %d, %q; want ls's help", code, out)
	}
}
