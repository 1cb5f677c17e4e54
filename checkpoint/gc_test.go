package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// gcAgent makes an agent of n committed rounds whose definition names
// blobs, and releases its lock.
func gcAgent(t *testing.T, s *FileStore, id string, n int, def Definition) {
	t.Helper()
	lock, err := s.Lock(id, ThisProcess("r"))
	must(t, err)
	defer lock.Unlock()
	log, err := s.Create(id, NewState(id, def, Labels{}, t0))
	must(t, err)
	for r := 1; r <= n; r++ {
		commitRound(t, log, r)
	}
	must(t, log.Close())
}

func age(t *testing.T, s *FileStore, digest string) {
	t.Helper()
	old := time.Now().Add(-2 * DefaultBlobGrace)
	must(t, os.Chtimes(filepath.Join(s.Dir(), "blobs", "sha256", digest[len("sha256:"):]), old, old))
}

func TestCollect(t *testing.T) {
	s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
	must(t, err)
	used, _ := s.PutBlob([]byte("agent file"))
	orphan, _ := s.PutBlob([]byte("an agent file nobody uses"))
	young, _ := s.PutBlob([]byte("just stored"))
	gcAgent(t, s, "a", 12, Definition{AgentFile: used, Workspace: "/ws"})
	dir := filepath.Join(s.Dir(), "agents", "a")
	marks := []string{"m1", "m2", "m3"}
	for i, label := range marks {
		ws, _ := s.PutBlob([]byte("workspace " + label))
		age(t, s, ws)
		must(t, s.PutBookmark("a", Bookmark{Label: label, Round: i, Time: t0.Add(time.Duration(i) * time.Hour),
			State: NewState("a", Definition{}, Labels{}, t0), Workspace: ws}))
	}
	must(t, os.WriteFile(filepath.Join(dir, "snap-00000000000000ff.cbor.tmp"), []byte("torn"), 0o600))
	must(t, os.MkdirAll(filepath.Join(dir, "staging", "round-7", "call_7_0"), 0o700))
	for _, d := range []string{used, orphan} {
		age(t, s, d)
	}
	snapsBefore, _ := listRounds(dir, "snap-", ".cbor")
	if len(snapsBefore) < 2 {
		t.Fatalf("compaction left %d snapshots; the test needs an old one", len(snapsBefore))
	}
	before, err := s.Read("a")
	must(t, err)

	keep := Retention{Bookmarks: 1, DryRun: true}
	dry, err := s.Collect(keep)
	must(t, err)
	if after, _ := listRounds(dir, "snap-", ".cbor"); !slices.Equal(after, snapsBefore) {
		t.Fatal("a dry run removed snapshots")
	}
	keep.DryRun = false
	got, err := s.Collect(keep)
	must(t, err)
	if !slices.Equal(dry.Files, got.Files) || dry.Bytes != got.Bytes {
		t.Fatalf("the dry run said %v, the run removed %v", dry.Files, got.Files)
	}
	snaps, _ := listRounds(dir, "snap-", ".cbor")
	if len(snaps) != 1 || snaps[0] != snapsBefore[len(snapsBefore)-1] {
		t.Fatalf("snapshots left %v, want only the newest of %v", snaps, snapsBefore)
	}
	after, err := s.Read("a")
	if err != nil || after.State.Round != before.State.Round || after.State.Round != 12 {
		t.Fatalf("after collecting: %v, round %d; want round 12", err, after.State.Round)
	}
	if bs, _ := s.Bookmarks("a"); len(bs) != 1 || bs[0].Label != "m3" {
		t.Fatalf("bookmarks left %+v, want m3", bs)
	}
	for digest, want := range map[string]bool{used: true, orphan: false, young: true, mustDigest("workspace m3"): true,
		mustDigest("workspace m1"): false} {
		if _, err := s.Blob(digest); (err == nil) != want {
			t.Errorf("blob %s kept %v, want %v", digest, err == nil, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "snap-00000000000000ff.cbor.tmp")); !os.IsNotExist(err) {
		t.Error("a temp file was left")
	}
	if _, err := os.Stat(filepath.Join(dir, "staging", "round-7")); !os.IsNotExist(err) {
		t.Error("staging of an agent with nothing to apply was left")
	}
}

// An agent a process runs is left alone, and the blobs it names stay.
func TestCollectSkipsARunningAgent(t *testing.T) {
	s, err := OpenFileStore(t.TempDir())
	must(t, err)
	mod, _ := s.PutBlob([]byte("module"))
	gcAgent(t, s, "busy", 12, Definition{Modules: map[string]string{"m.wasm": mod}})
	age(t, s, mod)
	lock, err := s.Lock("busy", ThisProcess("r"))
	must(t, err)
	defer lock.Unlock()
	dir := filepath.Join(s.Dir(), "agents", "busy")
	before, _ := listRounds(dir, "snap-", ".cbor")
	got, err := s.Collect(Retention{})
	must(t, err)
	after, _ := listRounds(dir, "snap-", ".cbor")
	if !slices.Equal(got.Skipped, []string{"busy"}) || !slices.Equal(before, after) {
		t.Fatalf("skipped %v, snapshots %v → %v", got.Skipped, before, after)
	}
	if _, err := s.Blob(mod); err != nil {
		t.Fatalf("the running agent's module was removed: %v", err)
	}
}

func mustDigest(content string) string {
	s, _ := (&MemStore{blobs: map[string][]byte{}}).PutBlob([]byte(content))
	return s
}

// Regression: gc removed the previous snapshot and journal of an agent
// whose checkpoint is from a newer schema, while the error it printed said
// the file was left unchanged. Now it touches nothing of that agent, nor
// any blob, says so, and still collects the other agents.
func TestCollectLeavesFutureSchemaAgentUntouched(t *testing.T) {
	s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
	must(t, err)
	used, _ := s.PutBlob([]byte("agent file of the newer agent"))
	orphan, _ := s.PutBlob([]byte("a blob nobody names"))
	age(t, s, used)
	age(t, s, orphan)
	gcAgent(t, s, "newer", 12, Definition{AgentFile: used, Workspace: "/ws"})
	gcAgent(t, s, "plain", 12, Definition{Workspace: "/ws"})
	dir := filepath.Join(s.Dir(), "agents", "newer")
	snaps, _ := listRounds(dir, "snap-", ".cbor")
	if len(snaps) < 2 {
		t.Fatalf("compaction left %d snapshots; the test needs an old one", len(snaps))
	}
	rewriteHeader(t, filepath.Join(dir, snapName(snaps[len(snaps)-1])), schemaVersion+1)
	must(t, os.WriteFile(filepath.Join(dir, "snap-00000000000000ff.cbor.tmp"), []byte("torn"), 0o600))
	before, blobsBefore := agentFiles(t, dir), agentFiles(t, filepath.Join(s.Dir(), "blobs"))
	plainBefore, _ := listRounds(filepath.Join(s.Dir(), "agents", "plain"), "snap-", ".cbor")

	got, err := s.Collect(Retention{})
	must(t, err)
	sameFiles(t, "gc of an agent from a newer schema", before, agentFiles(t, dir))
	sameFiles(t, "gc with an agent it cannot read", blobsBefore, agentFiles(t, filepath.Join(s.Dir(), "blobs")))
	if len(got.Unreadable) != 1 || got.Unreadable[0].Agent != "newer" || got.BlobsKept == "" {
		t.Fatalf("collected %+v: want agent newer named as unreadable and the blobs kept", got)
	}
	for _, f := range got.Files {
		if filepath.Base(filepath.Dir(f)) == "newer" {
			t.Fatalf("reported %s as removed", f)
		}
	}
	plainAfter, _ := listRounds(filepath.Join(s.Dir(), "agents", "plain"), "snap-", ".cbor")
	if len(plainAfter) != 1 || len(plainBefore) < 2 {
		t.Fatalf("the readable agent's snapshots went %v → %v; want it collected", plainBefore, plainAfter)
	}
}
