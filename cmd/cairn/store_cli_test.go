package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a command that only reads agents made a store wherever a
// mistyped --store pointed, and `ls` then listed nothing, exit 0. Such a
// command now refuses a store that is not there, exit 2, and makes
// nothing; `ls` of the default store before the first run lists nothing.
func TestReadersDoNotMakeAStore(t *testing.T) {
	typo := filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{
		{"show", "a", "--store", typo},
		{"ls", "--store", typo},
		{"resume", "a", "--store", typo},
		{"log", "a", "--store", typo},
		{"events", "a", "--store", typo},
		{"gc", "--store", typo},
	} {
		code, _, errOut := cairn(t, args...)
		if code != exitUsage || !strings.Contains(errOut, "no store at "+typo) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying there is no store", args, code, errOut)
		}
		if _, err := os.Stat(typo); err == nil {
			t.Fatalf("%v made the store it was pointed at", args)
		}
	}
	t.Setenv("CAIRN_STORE", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	if code, out, errOut := cairn(t, "ls"); code != exitDone || !strings.HasPrefix(out, "AGENT") || errOut != "" {
		t.Errorf("ls of the default store before any run: exit %d, %q, %q; want the empty table", code, out, errOut)
	}
}

// Regression: with the store's blobs gone, resume exited 2 ("bad command
// line") and said nothing of what to do. Damage to the store exits 1 and
// says how to go on.
func TestResumeWithBlobsGoneFails(t *testing.T) {
	args := exampleAgent(t)
	store := args[len(args)-3]
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "h"}, args...)...); code != exitDone {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	if err := os.RemoveAll(filepath.Join(store, "blobs")); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cairn(t, "resume", "h", "--store", store, "--cache", cacheForTests(t))
	if code != exitFailed || !strings.Contains(errOut, "definition is incomplete") || !strings.Contains(errOut, "restore the store's blobs/") {
		t.Fatalf("resume with the blobs gone: exit %d, %q; want exit 1 saying what to do", code, errOut)
	}
}

// An agent that cannot be read is listed as unreadable, with no figures
// (it once showed 0 rounds and an update in the year 1), and the reason
// follows the table on stderr (it once filled the STATUS column, some
// 330 characters wide).
func TestLsShowsAnUnreadableAgent(t *testing.T) {
	store := t.TempDir()
	dir := filepath.Join(store, "agents", "bad")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "snap-0000000000000000.cbor"), []byte("not a snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cairn(t, "ls", "--store", store)
	if code != exitDone || !strings.Contains(out, "bad  ") || strings.Contains(out, "0001-01-01") {
		t.Fatalf("ls: exit %d, %q, %q", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if f := strings.Fields(lines[len(lines)-1]); len(f) < 2 || f[0] != "bad" || f[1] != "unreadable" || len(lines[len(lines)-1]) > 80 {
		t.Errorf("bad's line: %q; want its status unreadable, the line short", lines[len(lines)-1])
	}
	if !strings.Contains(errOut, "agent bad is unreadable: ") || !strings.Contains(errOut, "snap-0000000000000000.cbor") {
		t.Errorf("stderr does not say why: %q", errOut)
	}
}
