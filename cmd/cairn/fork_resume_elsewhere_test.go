package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// An agent made by `cairn fork` on PostgreSQL carries its workspace in
// the database as a new agent does: resumed with --workspace into an
// empty directory (by another process, with a store of its own) it gets
// the workspace as it was at the round it was forked at, whether forked
// at a past round or at the last one. The fork keeps the past that says
// so (cairn_past has a row for it).
func TestForkedAgentResumesElsewhere(t *testing.T) {
	url := pgtest.Shared(t).NewDatabase(t)
	flags := exampleAgent(t)
	flags[len(flags)-3] = url
	if code, _, errOut := cairn(t, append([]string{"run", "--id", "orig"}, flags...)...); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	for _, fork := range []struct {
		as    string
		extra []string
	}{
		{"forked-2", []string{"--at-round", "4"}},
		{"forked-3", nil},
	} {
		wsFork := filepath.Join(t.TempDir(), "fork")
		args := append([]string{"fork", "--store", url, "--as", fork.as, "--workspace", wsFork}, fork.extra...)
		if code, out, errOut := cairn(t, append(args, "orig")...); code != exitDone {
			t.Fatalf("fork as %s: exit %d: %s%s", fork.as, code, out, errOut)
		}
		want := workspaceFiles(t, wsFork)
		if !strings.Contains(want["REPORT.md"], "# Report") {
			t.Fatalf("the fork's workspace: %v", want)
		}
		s, err := pgstore.Open(context.Background(), url)
		must(t, err)
		pasts, err := s.Pasts(fork.as)
		s.Close()
		if err != nil || len(pasts) != 1 || pasts[0].Base == "" {
			t.Fatalf("pasts of %s: %+v, %v; want one, with the whole workspace", fork.as, pasts, err)
		}

		elsewhere := filepath.Join(t.TempDir(), "elsewhere")
		code, out, errOut := cairn(t, "resume", "--store", url, "--cache", cacheForTests(t), "--workspace", elsewhere, fork.as)
		if code != exitDone {
			t.Fatalf("resume %s --workspace (empty): exit %d: %s%s", fork.as, code, out, errOut)
		}
		if got := workspaceFiles(t, elsewhere); !mapsEqual(got, want) {
			t.Fatalf("%s resumed elsewhere has\n%v\nwant\n%v", fork.as, got, want)
		}
	}
}
