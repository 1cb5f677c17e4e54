package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/syncpoint"
)

// roundsAgent makes agent "a" of n committed rounds, as a run keeps its
// pasts and history: round 0's past holds the whole workspace (a.txt),
// and each round r writes f<r%3>.txt with "round r", a blob of its own,
// and leaves a run's lines in the history.
func roundsAgent(t *testing.T, s *FileStore, n int) { t.Helper(); roundsAgentWith(t, s, n, nil, nil) }

// roundsAgentWith is roundsAgent whose rounds in gap have no past (a
// power cut lost them), and whose rounds in whole keep the whole
// workspace (a Base: a round that delegated, or after a gap).
func roundsAgentWith(t *testing.T, s *FileStore, n int, gap, whole map[int]bool) {
	t.Helper()
	gcAgent(t, s, "a", n, Definition{Workspace: "/ws"})
	lock, err := s.Lock("a", ThisProcess("r"))
	must(t, err)
	defer lock.Unlock()
	rec, err := s.Read("a")
	must(t, err)
	a, err := s.PutBlob([]byte("a"))
	must(t, err)
	m, err := EncodeManifest([]WorkspaceEntry{{Path: "a.txt", Size: 1, Mode: 0o644, Digest: a}})
	must(t, err)
	base, err := s.PutBlob(m)
	must(t, err)
	p, err := NewPast(rec.State, nil)
	must(t, err)
	p.Round, p.Base = 0, base
	must(t, s.PutPast("a", p))
	var events bytes.Buffer
	fmt.Fprintf(&events, `{"type":"run_start","time":"2026-01-01T00:00:00Z","agent":"a","run":"r1"}`+"\n")
	for r := 1; r <= n; r++ {
		content := fmt.Sprintf("round %d", r)
		d, err := s.PutBlob([]byte(content))
		must(t, err)
		p.Round, p.Base, p.Messages = r, "", 2*r
		p.Changes = []WorkspaceEntry{{Path: fmt.Sprintf("f%d.txt", r%3), Size: int64(len(content)), Mode: 0o644, Digest: d}}
		if whole[r] {
			m, err := EncodeManifest([]WorkspaceEntry{{Path: "whole.txt", Size: int64(len(content)), Mode: 0o644, Digest: d}})
			must(t, err)
			p.Base, err = s.PutBlob(m)
			must(t, err)
			p.Changes = nil
		}
		if !gap[r] {
			must(t, s.PutPast("a", p))
		}
		for _, typ := range []string{"model_turn", "tool_end", "round_end"} {
			fmt.Fprintf(&events, `{"type":%q,"time":"2026-01-01T00:00:00Z","agent":"a","run":"r1","round":%d}`+"\n", typ, r)
		}
	}
	must(t, os.WriteFile(filepath.Join(s.Dir(), "agents", "a", eventsFile), events.Bytes(), 0o600))
}

// workspaces is the workspace at each round of the agent's pasts, as
// names and contents.
func workspaces(t *testing.T, s *FileStore, from, to int) map[int]string {
	t.Helper()
	pasts, err := s.Pasts("a")
	must(t, err)
	out := map[int]string{}
	for r := from; r <= to; r++ {
		m, err := WorkspaceAt(s, pasts, "a", r)
		if err != nil {
			t.Fatalf("workspace at round %d: %v", r, err)
		}
		var b strings.Builder
		for _, e := range m {
			data, err := s.Blob(e.Digest)
			if err != nil {
				t.Fatalf("round %d, %s: %v", r, e.Path, err)
			}
			fmt.Fprintf(&b, "%s=%s ", e.Path, data)
		}
		out[r] = b.String()
	}
	return out
}

// `cairn gc --keep-rounds` keeps the last rounds' pasts, each round's
// workspace as it was, though the round 0 base they were rebuilt from is
// gone; the rounds before are refused, naming gc and the oldest round
// kept; the index names frames of the new file; the blobs of the rounds
// removed go; the history starts with a warning that says what it lost.
func TestCollectKeepRoundsKeepsTheLastRoundsWhole(t *testing.T) {
	s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
	must(t, err)
	roundsAgent(t, s, 70)
	want := workspaces(t, s, 30, 70)
	old, err := s.Blob(mustDigest("round 2"))
	must(t, err)
	entries, _ := os.ReadDir(filepath.Join(s.Dir(), "blobs", "sha256"))
	for _, e := range entries {
		age(t, s, "sha256:"+e.Name())
	}
	got, err := s.Collect(Retention{Rounds: 40})
	must(t, err)
	if len(got.Trimmed) != 2 || got.Trimmed[0].Round != 31 || got.Trimmed[0].Bytes <= 0 || got.Trimmed[1].Bytes <= 0 {
		t.Fatalf("trimmed %+v", got.Trimmed)
	}
	pasts, err := s.Pasts("a")
	must(t, err)
	if pasts[0].Round != 30 || !pasts[0].Trimmed || pasts[0].Base == "" || len(pasts) != 41 {
		t.Fatalf("pasts from round %d (trimmed %v, base %q), %d of them", pasts[0].Round, pasts[0].Trimmed, pasts[0].Base, len(pasts))
	}
	if after := workspaces(t, s, 30, 70); fmt.Sprint(after) != fmt.Sprint(want) {
		t.Fatalf("workspaces after the trim:\n%v\nwant\n%v", after, want)
	}
	_, err = PastAt(pasts, "a", 12)
	if !errors.Is(err, ErrNoPast) || !strings.Contains(err.Error(), "round 12") ||
		!strings.Contains(err.Error(), "`cairn gc --keep-rounds` removed the pasts of the rounds before 30") ||
		!strings.Contains(err.Error(), "the oldest round to fork at is 30") {
		t.Fatalf("past of round 12: %v", err)
	}
	if err := TrimmedAt(pasts[0], "a"); !errors.Is(err, ErrNoPast) || !strings.Contains(err.Error(), "is 31") {
		t.Fatalf("changes of round 30: %v", err)
	}
	if _, err := s.Blob(mustDigest("round 2")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("blob of round 2 (%q): %v", old, err)
	}
	tail, err := readPastTail(filepath.Join(s.Dir(), "agents", "a", pastFile))
	must(t, err)
	if tail.start == 0 || len(tail.frames) != 7 { // from round 64's frame
		t.Fatalf("the index names no frame of the trimmed file: tail from %d, %d frames", tail.start, len(tail.frames))
	}
	if p, ok, err := s.NewestPast("a"); err != nil || !ok || p.Round != 70 {
		t.Fatalf("newest past: round %d, %v, %v", p.Round, ok, err)
	}
	data, err := os.ReadFile(filepath.Join(s.Dir(), "agents", "a", eventsFile))
	must(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var first TrimmedEvents
	must(t, json.Unmarshal([]byte(lines[0]), &first))
	if first.Type != "warning" || first.Run != "" || first.Round != 31 || first.Removed != 1+30*3 ||
		!strings.Contains(first.Text, "before round 31") || len(lines) != 1+40*3 || !strings.Contains(lines[1], `"round":31`) {
		t.Fatalf("history starts %q, %d lines", lines[:2], len(lines))
	}
	// Again, with fewer: the warning counts every line removed.
	got, err = s.Collect(Retention{Rounds: 10})
	must(t, err)
	data, _ = os.ReadFile(filepath.Join(s.Dir(), "agents", "a", eventsFile))
	lines = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	must(t, json.Unmarshal([]byte(lines[0]), &first))
	if first.Removed != 1+60*3 || len(lines) != 1+10*3 || len(got.Trimmed) != 2 {
		t.Fatalf("after a second trim: removed %d, %d lines, trimmed %+v", first.Removed, len(lines), got.Trimmed)
	}
	if after := workspaces(t, s, 60, 70); fmt.Sprint(after) != fmt.Sprint(map[int]string{60: want[60], 61: want[61], 62: want[62],
		63: want[63], 64: want[64], 65: want[65], 66: want[66], 67: want[67], 68: want[68], 69: want[69], 70: want[70]}) {
		t.Fatalf("workspaces after a second trim: %v", after)
	}
	// Nothing more to trim: nothing is rewritten.
	if got, err = s.Collect(Retention{Rounds: 10}); err != nil || len(got.Trimmed) != 0 {
		t.Fatalf("a third gc: %+v, %v", got, err)
	}
}

// A dry run says what it would trim and writes nothing.
func TestCollectKeepRoundsDryRunWritesNothing(t *testing.T) {
	s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
	must(t, err)
	roundsAgent(t, s, 20)
	before := snapshotDir(t, filepath.Join(s.Dir(), "agents", "a"))
	got, err := s.Collect(Retention{Rounds: 5, DryRun: true})
	must(t, err)
	if len(got.Trimmed) != 2 || got.Bytes == 0 {
		t.Fatalf("dry run: %+v", got)
	}
	if after := snapshotDir(t, filepath.Join(s.Dir(), "agents", "a")); after != before {
		t.Fatal("a dry run changed the agent's files")
	}
}

// snapshotDir is the names and contents of the files under dir but its
// lock, which every Collect touches.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "lock" {
			return err
		}
		data, _ := os.ReadFile(p)
		fmt.Fprintf(&b, "%s %x\n", p, data)
		return nil
	})
	return b.String()
}

// A kill at any point of a trim, here a panic at each of its syncs in
// turn, leaves each file as it was or as the trim makes it, whole: the
// past file, its index and the history are each replaced by a rename of
// a synced temp file. The store then reads, every round kept travels,
// and a gc after the kill finishes the trim and removes the temp files.
func TestKeepRoundsKilledAtEachSyncLeavesTheOldOrTheNewFile(t *testing.T) {
	model := t.TempDir()
	s, err := OpenFileStore(model, WithCompactAfter(0))
	must(t, err)
	roundsAgent(t, s, 40)
	want := workspaces(t, s, 30, 40)
	names := []string{pastFile, pastIndexFile, eventsFile}
	old := readFiles(t, model, names)
	done := t.TempDir()
	copyTree(t, model, done)
	ds, err := OpenFileStore(done, WithCompactAfter(0))
	must(t, err)
	_, err = ds.Collect(Retention{Rounds: 10})
	must(t, err)
	trimmed := readFiles(t, done, names)
	for k := 1; ; k++ {
		dir := t.TempDir()
		copyTree(t, model, dir)
		ks, err := OpenFileStore(dir, WithCompactAfter(0))
		must(t, err)
		if !killedAtSync(ks, k) {
			if k < 4 {
				t.Fatalf("the trim made only %d syncs", k-1)
			}
			break
		}
		now := readFiles(t, dir, names)
		for _, n := range names {
			if now[n] != old[n] && now[n] != trimmed[n] {
				t.Fatalf("killed at sync %d: %s is neither the old file nor the new one:\n%q", k, n, now[n])
			}
		}
		after, err := OpenFileStore(dir, WithCompactAfter(0))
		must(t, err)
		if got := workspaces(t, after, 30, 40); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("killed at sync %d: workspaces %v", k, got)
		}
		if _, err := after.Collect(Retention{Rounds: 10}); err != nil {
			t.Fatalf("gc after a kill at sync %d: %v", k, err)
		}
		if now := readFiles(t, dir, names); fmt.Sprint(now) != fmt.Sprint(trimmed) {
			t.Fatalf("gc after a kill at sync %d did not finish the trim", k)
		}
		if tmps := tempFiles(filepath.Join(dir, "agents", "a"), ""); len(tmps) != 0 {
			t.Fatalf("gc after a kill at sync %d left %v", k, tmps)
		}
	}
}

// killedAtSync runs a trim that panics, as a kill stops it, right after
// its k-th sync; false when it made fewer.
func killedAtSync(s *FileStore, k int) (killed bool) {
	n := 0
	stop := syncpoint.Observe(func(string) {
		if n++; n == k {
			panic("killed")
		}
	})
	defer stop()
	defer func() {
		if r := recover(); r != nil {
			killed = true
		}
	}()
	s.Collect(Retention{Rounds: 10})
	return false
}

func readFiles(t *testing.T, root string, names []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(root, "agents", "a", n))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		out[n] = string(data)
	}
	return out
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	must(t, filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o600)
	}))
}

// A past depends on the newest whole workspace at or before it and on
// every round's changes since. Where the floor's workspace cannot be
// rebuilt (a round's past lost after the last whole workspace before the
// floor), the pasts are cut at that whole workspace, which every round
// kept needs, or not at all when it is the first: a round that could be
// forked at before the trim still can.
func TestKeepRoundsKeepsTheWholeWorkspaceAKeptRoundNeeds(t *testing.T) {
	for _, c := range []struct {
		name      string
		whole     map[int]bool
		wantFirst int
	}{
		{"whole at round 8, a gap at 12", map[int]bool{8: true}, 8},
		{"no whole workspace but round 0's, a gap at 12", nil, 0},
		{"whole at round 13, after the gap", map[int]bool{13: true}, 15},
		{"whole at the floor", map[int]bool{15: true}, 15},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
			must(t, err)
			roundsAgentWith(t, s, 20, map[int]bool{12: true}, c.whole)
			usable := func() map[int]string {
				pasts, err := s.Pasts("a")
				must(t, err)
				out := map[int]string{}
				for r := 0; r <= 20; r++ {
					if m, err := WorkspaceAt(s, pasts, "a", r); err == nil {
						out[r] = fmt.Sprint(m)
					}
				}
				return out
			}
			before := usable()
			_, err = s.Collect(Retention{Rounds: 5})
			must(t, err)
			pasts, err := s.Pasts("a")
			must(t, err)
			if pasts[0].Round != c.wantFirst || pasts[0].Trimmed != (c.wantFirst > 0) {
				t.Fatalf("pasts start at round %d (trimmed %v), want %d", pasts[0].Round, pasts[0].Trimmed, c.wantFirst)
			}
			after := usable()
			for r, m := range before {
				if r >= 15 && after[r] != m {
					t.Fatalf("round %d's workspace: %s, was %s", r, after[r], m)
				}
			}
		})
	}
}

// A trim whose rename fails (here: its temp file taken away once it is
// synced) leaves that file as it was, whole, and
// no temp file; gc names the agent in Untrimmed and collects the rest of
// the store, keeping every blob what the pasts on disk name: a past file
// that stays old keeps the blobs of the rounds the trim would remove.
func TestKeepRoundsWhoseRenameFailsLeavesTheOldFile(t *testing.T) {
	for _, name := range []string{pastFile, eventsFile} {
		t.Run(name, func(t *testing.T) {
			s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
			must(t, err)
			roundsAgent(t, s, 20)
			dir := filepath.Join(s.Dir(), "agents", "a")
			old := readFiles(t, s.Dir(), []string{name})[name]
			orphan, err := s.PutBlob([]byte("no one names this"))
			must(t, err)
			entries, _ := os.ReadDir(filepath.Join(s.Dir(), "blobs", "sha256"))
			for _, e := range entries {
				age(t, s, "sha256:"+e.Name())
			}
			stop := syncpoint.Observe(func(p string) {
				if filepath.Dir(p) == dir && strings.HasPrefix(filepath.Base(p), name+".") && strings.HasSuffix(p, ".tmp") {
					os.Remove(p)
				}
			})
			got, err := s.Collect(Retention{Rounds: 5})
			stop()
			must(t, err)
			if len(got.Untrimmed) != 1 || got.Untrimmed[0].Agent != "a" || !strings.Contains(got.Untrimmed[0].Reason, "trim") {
				t.Fatalf("untrimmed %+v", got.Untrimmed)
			}
			if _, err := s.Blob(orphan); !errors.Is(err, ErrNotFound) {
				t.Fatalf("the rest of the store was not collected: %v", err)
			}
			if now := readFiles(t, s.Dir(), []string{name})[name]; now != old {
				t.Fatalf("%s is not as it was", name)
			}
			if tmps := tempFiles(dir, ""); len(tmps) != 0 {
				t.Fatalf("left %v", tmps)
			}
			pasts, err := s.Pasts("a")
			must(t, err)
			if name == pastFile {
				if pasts[0].Round != 0 {
					t.Fatalf("pasts start at round %d", pasts[0].Round)
				}
				workspaces(t, s, 0, 20) // every blob they need is there
			} else {
				workspaces(t, s, pasts[0].Round, 20)
			}
		})
	}
}

// Where a history is cut for rounds from 3 on: at the agent's first line
// of round 3 or later, with the lines just before it of its run that
// belong to no earlier round (a resume's start), not at a sub-agent's
// line of its own round 3, nor past a garbled line; an earlier trim's
// warning is counted with the lines it stands for.
func TestHistoryCut(t *testing.T) {
	ev := func(typ, agent, run string, round int) string {
		return fmt.Sprintf(`{"type":%q,"time":"2026-01-01T00:00:00Z","agent":%q,"run":%q,"round":%d}`+"\n", typ, agent, run, round)
	}
	round := func(run string, r int) string {
		return ev("model_turn", "a", run, r) + ev("checkpoint_saved", "a", run, r) + ev("round_end", "a", run, r)
	}
	resume := ev("run_start", "a", "r2", 0) + ev("checkpoint_loaded", "a", "r2", 2) + ev("agent_resumed", "a", "r2", 2)
	for _, c := range []struct {
		name, history, kept string
		removed             int64
	}{
		{"one run", ev("run_start", "a", "r1", 0) + round("r1", 1) + round("r1", 2) + round("r1", 3), round("r1", 3), 7},
		{"a resume before round 3", ev("run_start", "a", "r1", 0) + round("r1", 1) + round("r1", 2) + resume + round("r2", 3),
			resume + round("r2", 3), 7},
		{"a sub-agent's round 3", round("r1", 1) + ev("model_turn", "child", "c1", 3) + round("r1", 2) + round("r1", 3),
			round("r1", 3), 7},
		{"a garbled line", round("r1", 1) + round("r1", 2) + "{garbled\n" + round("r1", 3), round("r1", 3), 7},
		{"an earlier trim", `{"type":"warning","time":"2026-01-01T00:00:00Z","agent":"a","run":"","round":2,"removed":40}` + "\n" +
			round("r1", 2) + round("r1", 3), round("r1", 3), 43},
		{"nothing before round 3", round("r1", 3), "", 0},
		{"no line of round 3", round("r1", 1) + round("r1", 2), "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cut, err := cutOf(bufio.NewReader(strings.NewReader(c.history)), "a", 3)
			must(t, err)
			if c.kept == "" {
				if cut.lines != 0 {
					t.Fatalf("cut %+v, want none", cut)
				}
				return
			}
			if got := c.history[cut.off:]; got != c.kept || cut.removed != c.removed {
				t.Fatalf("kept %q, removed %d; want %q, %d", got, cut.removed, c.kept, c.removed)
			}
		})
	}
}
