package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/pgstore"
	"github.com/cairnrun/cairn/host"
	"github.com/cairnrun/cairn/internal/pgtest"
)

// pgGCMidRead is a PostgreSQL store that runs `cairn gc` as a process of
// its own just before blob read number at (counted from 1), or before the
// first read of blob before, as a gc started by someone else while the
// reader was reading would.
type pgGCMidRead struct {
	*pgstore.Store
	t      *testing.T
	url    string
	at     int
	before string
	args   []string

	mu    sync.Mutex
	reads int
	gcOut string
}

func (s *pgGCMidRead) Blob(digest string) ([]byte, error) {
	s.mu.Lock()
	s.reads++
	if s.reads == s.at || digest == s.before && s.gcOut == "" {
		code, out, errOut := cairnProcess(s.t, append([]string{"gc", "--store", s.url}, s.args...)...)
		if code != exitDone {
			s.t.Errorf("gc: exit %d %s%s", code, out, errOut)
		}
		s.gcOut = out
	}
	s.mu.Unlock()
	return s.Store.Blob(digest)
}

// pgTrimMidRead opens url as a pgGCMidRead that runs `cairn gc
// --keep-rounds keep` before blob read at, every blob aged past gc's
// grace.
func pgTrimMidRead(t *testing.T, url string, at int, keep string) *pgGCMidRead {
	t.Helper()
	sql(t, url, `UPDATE cairn_blobs SET stored = now() - interval '2 hours'`)
	ps, err := pgstore.Open(context.Background(), url)
	must(t, err)
	t.Cleanup(ps.Close)
	return &pgGCMidRead{Store: ps, t: t, url: url, at: at, args: []string{"--keep-rounds", keep}}
}

// pgDiff is what Engine.Changes of the agent's round says on s, each
// change's files read, as `cairn diff --round` shows them.
func pgDiff(t *testing.T, s *pgGCMidRead, agent string, round int) (string, error) {
	t.Helper()
	eng, err := host.NewEngine(context.Background(), host.Config{Store: s, CacheDir: cacheForTests(t)})
	must(t, err)
	defer eng.Close(context.Background())
	_, changes, err := eng.Changes(context.Background(), agent, round)
	var out strings.Builder
	for _, fc := range changes {
		if err != nil {
			break
		}
		var after []byte
		_, after, err = fc.Texts()
		out.WriteString(fc.Path + "=" + string(after) + " ")
	}
	return out.String(), err
}

// A diff of a past round reads the agent's pasts, then the blobs they
// name: the workspace before the round, then the files before and after
// it. `cairn gc --keep-rounds` run meanwhile on a PostgreSQL store replaces
// the pasts and removes the blobs only the rounds it removed used. The
// diff says the round was removed, naming gc and the oldest round whose
// changes can be seen: never "blob not found" for a round that was there
// when it was asked for.
func TestDiffOfARoundGCKeepRoundsTrimsMeanwhileOnPostgreSQLSaysItWasRemoved(t *testing.T) {
	t.Parallel()
	// Round 10's workspace before it is read (read 1), then its files:
	// gc runs before the first, keeping rounds 14 on.
	url, _ := pgRoundsAgent(t, "w")
	s := pgTrimMidRead(t, url, 1, "12")
	_, err := pgDiff(t, s, "w", 10)
	if !strings.Contains(s.gcOut, "removed the rounds before 15") {
		t.Fatalf("gc did not trim: %s", s.gcOut)
	}
	if err == nil || !strings.Contains(err.Error(), "round 10") || !strings.Contains(err.Error(), "`cairn gc --keep-rounds` removed") ||
		!strings.Contains(err.Error(), "whose changes and messages can be seen is 15") || strings.Contains(err.Error(), "blob") {
		t.Fatalf("diff of round 10 while gc removed it: %v", err)
	}
	if code, out, errOut := cairnProcess(t, "diff", "--store", url, "--round", "15", "w"); code != exitDone || !strings.Contains(out, "+round 15") {
		t.Fatalf("diff of round 15 after the trim: exit %d %s%s", code, out, errOut)
	}
}

// An export reads the agent's pasts, then every blob they name; `cairn gc
// --keep-rounds` run meanwhile on a PostgreSQL store removes the rounds
// before the last it keeps and the blobs only they used. The export says
// that gc removed rounds while it read them and to export again: never
// "blob not found". Exported again, the agent carries the rounds kept.
func TestExportGCKeepRoundsTrimsMeanwhileOnPostgreSQLSaysRoundsWereRemoved(t *testing.T) {
	t.Parallel()
	url, _ := pgRoundsAgent(t, "w")
	s := pgTrimMidRead(t, url, 1, "12")
	_, err := host.Export(s, "w")
	if !strings.Contains(s.gcOut, "removed the rounds before 15") {
		t.Fatalf("gc did not trim: %s", s.gcOut)
	}
	if err == nil || !strings.Contains(err.Error(), "`cairn gc --keep-rounds` removed") || !strings.Contains(err.Error(), "export") ||
		!strings.Contains(err.Error(), "again") || strings.Contains(err.Error(), "blob") {
		t.Fatalf("export while gc trimmed the agent: %v", err)
	}
	a, err := host.Export(s, "w")
	if err != nil {
		t.Fatalf("export after the trim: %v", err)
	}
	if len(a.Pasts) == 0 || a.Pasts[0].Round != 14 || !a.Pasts[0].Trimmed {
		t.Fatalf("the export after the trim has pasts %+v", a.Pasts)
	}
}

// An export reads the agent's bookmarks, then every blob they name; `cairn
// gc --keep-bookmarks` run meanwhile on a PostgreSQL store removes the
// oldest bookmarks and the blobs only they used. The export says that gc
// removed bookmarks while it read them and to export again: never "blob
// not found". Exported again, the agent carries the bookmark kept.
func TestExportGCKeepBookmarksRemovesMeanwhileOnPostgreSQLSaysBookmarksWereRemoved(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).NewDatabase(t)
	agentFile, _ := scriptAgent(t, `name: w
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin, only: [write_file]}]
`, roundsScript(3))
	if code, _, errOut := cairnProcess(t, "run", "--store", url, "--cache", cacheForTests(t), "--id", "w", "-f", agentFile, "go"); code != exitDone {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	// Two bookmarks of two workspaces: the older one's is a blob only it
	// names.
	if code, _, errOut := cairnProcess(t, "snapshot", "--store", url, "--label", "old", "w"); code != exitDone {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	must(t, os.WriteFile(filepath.Join(filepath.Dir(agentFile), "workspace", "extra.txt"), []byte("after the first bookmark"), 0o644))
	if code, _, errOut := cairnProcess(t, "snapshot", "--store", url, "--label", "new", "w"); code != exitDone {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	s := pgTrimMidRead(t, url, 0, "")
	s.args = []string{"--keep-bookmarks", "1"}
	marks, err := s.Bookmarks("w")
	must(t, err)
	s.before = marks[0].Workspace // gc runs just before the export reads it
	_, err = host.Export(s, "w")
	if !strings.Contains(s.gcOut, "bookmark w/old") {
		t.Fatalf("gc did not remove the bookmark: %s", s.gcOut)
	}
	if err == nil || !strings.Contains(err.Error(), "`cairn gc --keep-bookmarks` removed") || !strings.Contains(err.Error(), "export it again") ||
		strings.Contains(err.Error(), "blob") {
		t.Fatalf("export while gc removed a bookmark: %v", err)
	}
	a, err := host.Export(s, "w")
	if err != nil {
		t.Fatalf("export after gc: %v", err)
	}
	if len(a.Bookmarks) != 1 || a.Bookmarks[0].Label != "new" {
		t.Fatalf("the export after gc has bookmarks %+v", a.Bookmarks)
	}
}
