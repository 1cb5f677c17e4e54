package storetest

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint"
)

// Each round's past is kept: the state at any boundary comes back with its
// conversation cut to that boundary, the workspace at any round is the
// base with the later rounds' changes applied, a round put twice keeps the
// last, and a gap is ErrNoPast, not a wrong workspace. Remove forgets the
// pasts with the state. A store that keeps no past (no
// checkpoint.Timeline) skips this test.
func testTimeline(t *testing.T, s checkpoint.Store) {
	tl, ok := s.(checkpoint.Timeline)
	if !ok {
		t.Skip("the store keeps no past boundaries")
	}
	a := create(t, s, "a1", 0)
	wantErr(t, "PutPast of an unknown agent", tl.PutPast("nobody", checkpoint.Past{Round: 1}), checkpoint.ErrNotFound)
	ws := workspaceBlobs(t, s)
	putPast(t, tl, a.log.State(), ws["base"], nil)
	for r := 1; r <= 4; r++ {
		commitRound(t, a.log, r, 0)
		putPast(t, tl, a.log.State(), "", ws.changes(r))
	}
	putPast(t, tl, a.log.State(), "", ws.changes(4)) // round 4 again: one past
	pasts, err := tl.Pasts("a1")
	must(t, err)
	if len(pasts) != 5 || pasts[0].Round != 0 || pasts[4].Round != 4 {
		t.Fatalf("pasts: %d, want rounds 0 to 4", len(pasts))
	}
	newest, ok, err := tl.NewestPast("a1")
	must(t, err)
	if !ok || newest.Round != 4 || newest.Messages != pasts[4].Messages || len(newest.Changes) != len(pasts[4].Changes) {
		t.Fatalf("newest past: round %d (%v), want round 4 as Pasts has it", newest.Round, ok)
	}
	if _, ok, err := tl.NewestPast("nobody"); ok || err != nil {
		t.Fatalf("newest past of an unknown agent: %v, %v", ok, err)
	}
	p2, err := checkpoint.PastAt(pasts, "a1", 2)
	must(t, err)
	st, err := checkpoint.StateAt(a.log.State(), p2)
	must(t, err)
	if st.Round != 2 || st.ToolCalls != 2 || len(st.Messages) != 5 || st.Messages[4].Text != "out 2" {
		t.Fatalf("state at round 2: round %d, %d calls, %d messages", st.Round, st.ToolCalls, len(st.Messages))
	}
	wantFiles(t, s, pasts, 0, map[string]string{"a.txt": "one", "d": "/"})
	wantFiles(t, s, pasts, 1, map[string]string{"a.txt": "two", "d": "/"})
	wantFiles(t, s, pasts, 2, map[string]string{"a.txt": "two", "d": "/", "d/b.txt": "three"})
	wantFiles(t, s, pasts, 3, map[string]string{"a.txt": "two"})
	wantFiles(t, s, pasts, 4, map[string]string{})
	_, err = checkpoint.WorkspaceAt(s, pasts, "a1", 9)
	wantErr(t, "workspace at a round never committed", err, checkpoint.ErrNoPast)
	_, err = checkpoint.WorkspaceAt(s, append(pasts[:2:2], pasts[3:]...), "a1", 4)
	wantErr(t, "workspace past a gap", err, checkpoint.ErrNoPast)
	a.release()
	lock, err := s.Lock("a1", checkpoint.ThisProcess("rm"))
	must(t, err)
	must(t, s.Remove("a1"))
	must(t, lock.Unlock())
	if pasts, err := tl.Pasts("a1"); err != nil || len(pasts) != 0 {
		t.Fatalf("pasts after Remove: %d, %v", len(pasts), err)
	}
	if _, ok, err := tl.NewestPast("a1"); ok || err != nil {
		t.Fatalf("newest past after Remove: %v, %v", ok, err)
	}
}

// workspace is the blobs of the test's workspace by name.
type workspace map[string]string

func workspaceBlobs(t *testing.T, s checkpoint.Store) workspace {
	t.Helper()
	ws := workspace{}
	for _, c := range []string{"one", "two", "three"} {
		d, err := s.PutBlob([]byte(c))
		must(t, err)
		ws[c] = d
	}
	base, err := checkpoint.EncodeManifest([]checkpoint.WorkspaceEntry{
		{Path: "d", Dir: true, Mode: 0o755},
		{Path: "a.txt", Digest: ws["one"], Mode: 0o644, Size: 3},
	})
	must(t, err)
	if ws["base"], err = s.PutBlob(base); err != nil {
		t.Fatal(err)
	}
	return ws
}

// changes are what round r changed.
func (ws workspace) changes(r int) []checkpoint.WorkspaceEntry {
	switch r {
	case 1:
		return []checkpoint.WorkspaceEntry{{Path: "a.txt", Digest: ws["two"], Mode: 0o644, Size: 3}}
	case 2:
		return []checkpoint.WorkspaceEntry{{Path: "d/b.txt", Digest: ws["three"], Mode: 0o600, Size: 5}}
	case 3:
		return []checkpoint.WorkspaceEntry{{Path: "d", Gone: true}}
	case 4:
		return []checkpoint.WorkspaceEntry{{Path: "a.txt", Gone: true}}
	}
	return nil
}

func putPast(t *testing.T, tl checkpoint.Timeline, st *checkpoint.State, base string, changes []checkpoint.WorkspaceEntry) {
	t.Helper()
	p, err := checkpoint.NewPast(st, changes)
	must(t, err)
	p.Base = base
	must(t, tl.PutPast(st.Agent, p))
}

// wantFiles checks the workspace at round n: each path's content, or "/"
// for a directory.
func wantFiles(t *testing.T, s checkpoint.Store, pasts []checkpoint.Past, n int, want map[string]string) {
	t.Helper()
	m, err := checkpoint.WorkspaceAt(s, pasts, "a1", n)
	must(t, err)
	got := map[string]string{}
	for _, e := range m {
		if e.Dir {
			got[e.Path] = "/"
			continue
		}
		data, err := s.Blob(e.Digest)
		must(t, err)
		got[e.Path] = string(data)
	}
	if len(got) != len(want) {
		t.Fatalf("workspace at round %d: %v, want %v", n, got, want)
	}
	for p, c := range want {
		if got[p] != c {
			t.Fatalf("workspace at round %d: %v, want %v", n, got, want)
		}
	}
}
