package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --namespace keeps agents of one id apart in one directory store: each
// namespace lists, shows and collects its own; the default namespace is
// where agents always were; CAIRN_NAMESPACE is the same as the flag.
func TestNamespacesKeepAgentsApart(t *testing.T) {
	flags := exampleAgent(t)
	store := flags[len(flags)-3]
	for _, ns := range []string{"acme", "beta"} {
		args := append([]string{"run", "--id", "same", "--namespace", ns}, flags...)
		if code, _, errOut := cairn(t, args...); code != exitDone {
			t.Fatalf("run in %s: exit %d: %s", ns, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(store, "namespaces", "acme", "agents", "same")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := cairn(t, "ls", "--store", store)
	if code != exitDone || strings.Contains(out, "same") {
		t.Fatalf("the default namespace lists:\n%s", out)
	}
	t.Setenv("CAIRN_NAMESPACE", "beta")
	code, out, _ = cairn(t, "ls", "--store", store)
	if code != exitDone || !strings.Contains(out, "same") {
		t.Fatalf("CAIRN_NAMESPACE=beta lists:\n%s", out)
	}
	if code, out, errOut := cairn(t, "gc", "--store", store, "--namespace", "acme"); code != exitDone {
		t.Fatalf("gc in acme: exit %d: %s%s", code, out, errOut)
	}
	if code, _, errOut := cairn(t, "show", "--store", store, "--namespace", "acme", "same"); code != exitDone {
		t.Fatalf("show in acme after gc: exit %d: %s", code, errOut)
	}
	if code, _, errOut := cairn(t, "ls", "--store", store, "--namespace", "../x"); code != exitUsage || !strings.Contains(errOut, "namespace") {
		t.Fatalf("a bad namespace: exit %d: %s", code, errOut)
	}
}
