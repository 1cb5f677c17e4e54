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

// agentDamage is what can befall one agent's directory so that gc cannot
// read what it refers to; each leaves the directory as it is.
var agentDamage = map[string]func(t *testing.T, s *FileStore, dir string){
	"journal with a bad CRC": func(t *testing.T, s *FileStore, dir string) {
		journals, _ := listRounds(dir, "journal-", ".log")
		path := filepath.Join(dir, journalName(journals[len(journals)-1]))
		data, err := os.ReadFile(path)
		must(t, err)
		data[frameHeader+3] ^= 0xff // in its first record, well before its last
		must(t, os.WriteFile(path, data, 0o600))
	},
	"past of another frame type": func(t *testing.T, s *FileStore, dir string) {
		must(t, os.WriteFile(filepath.Join(dir, pastFile), appendFrame(nil, RecCommit, []byte{0xa0}), 0o600))
	},
	"past whose base blob is lost": func(t *testing.T, s *FileStore, dir string) {
		payload, err := encodePast(Past{Round: 3, Base: mustDigest("a manifest nobody stored")})
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, pastFile), appendFrame(nil, pastFrame, payload), 0o600))
	},
	"lock that cannot be opened": func(t *testing.T, s *FileStore, dir string) {
		must(t, os.Remove(filepath.Join(dir, "lock")))
		must(t, os.Mkdir(filepath.Join(dir, "lock"), 0o700))
	},
}

// Regression: gc stopped with an error at an agent whose directory it
// could not read or lock, and collected nothing for the agents after it;
// for a damaged past it had trimmed the agent first. Now it leaves that
// agent as it is, names it, keeps every blob (the agent may refer to any),
// and collects the other agents.
func TestCollectGoesOnPastAnUnreadableAgent(t *testing.T) {
	for name, damage := range agentDamage {
		t.Run(name, func(t *testing.T) {
			s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
			must(t, err)
			orphan, _ := s.PutBlob([]byte("a blob nobody names"))
			age(t, s, orphan)
			// "a" comes before "b": gc reads the damaged agent first.
			gcAgent(t, s, "a", 12, Definition{Workspace: "/ws"})
			gcAgent(t, s, "b", 12, Definition{Workspace: "/ws"})
			bad, good := filepath.Join(s.Dir(), "agents", "a"), filepath.Join(s.Dir(), "agents", "b")
			must(t, os.WriteFile(filepath.Join(good, "snap-00000000000000ff.cbor.tmp"), []byte("torn"), 0o600))
			damage(t, s, bad)
			before, blobsBefore := agentFiles(t, bad), agentFiles(t, filepath.Join(s.Dir(), "blobs"))
			goodBefore, _ := listRounds(good, "snap-", ".cbor")

			got, err := s.Collect(Retention{})
			if err != nil {
				t.Fatalf("collect: %v; want the agent skipped and the rest collected", err)
			}
			sameFiles(t, "gc of a damaged agent", before, agentFiles(t, bad))
			sameFiles(t, "gc with an agent it cannot read", blobsBefore, agentFiles(t, filepath.Join(s.Dir(), "blobs")))
			if len(got.Unreadable) != 1 || got.Unreadable[0].Agent != "a" || got.Unreadable[0].Reason == "" || got.BlobsKept == "" {
				t.Fatalf("collected %+v: want agent a named as unreadable, with why, and the blobs kept", got)
			}
			goodAfter, _ := listRounds(good, "snap-", ".cbor")
			if len(goodAfter) != 1 || len(goodBefore) < 2 {
				t.Fatalf("the readable agent's snapshots went %v → %v; want it collected", goodBefore, goodAfter)
			}
			if _, err := os.Stat(filepath.Join(good, "snap-00000000000000ff.cbor.tmp")); !os.IsNotExist(err) {
				t.Error("the readable agent's temp file was left")
			}
		})
	}
}

// An agent a process runs whose state gc cannot read is skipped as any
// running agent is; since what it refers to is unknown, no blob is removed.
func TestCollectKeepsBlobsOfARunningAgentItCannotRead(t *testing.T) {
	s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
	must(t, err)
	orphan, _ := s.PutBlob([]byte("a blob nobody names"))
	age(t, s, orphan)
	gcAgent(t, s, "busy", 12, Definition{Workspace: "/ws"})
	gcAgent(t, s, "idle", 12, Definition{Workspace: "/ws"})
	agentDamage["past of another frame type"](t, s, filepath.Join(s.Dir(), "agents", "busy"))
	lock, err := s.Lock("busy", ThisProcess("r"))
	must(t, err)
	defer lock.Unlock()
	got, err := s.Collect(Retention{})
	if err != nil {
		t.Fatalf("collect: %v; want the agent skipped and the rest collected", err)
	}
	if !slices.Equal(got.Skipped, []string{"busy"}) || len(got.Unreadable) != 1 || got.Unreadable[0].Agent != "busy" || got.BlobsKept == "" {
		t.Fatalf("collected %+v: want busy skipped, named as unreadable, and the blobs kept", got)
	}
	if _, err := s.Blob(orphan); err != nil {
		t.Fatalf("a blob was removed while an agent's blobs are unknown: %v", err)
	}
	if idle, _ := listRounds(filepath.Join(s.Dir(), "agents", "idle"), "snap-", ".cbor"); len(idle) != 1 {
		t.Fatalf("the idle agent kept snapshots %v; want it collected", idle)
	}
}

// An agent whose directory cairn may not open (mode 000) is left as it
// is, as a damaged one is. Root opens it anyway: the test needs another
// user.
func TestCollectGoesOnPastAnAgentItMayNotOpen(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root opens a directory of mode 000")
	}
	s, err := OpenFileStore(t.TempDir(), WithCompactAfter(0))
	must(t, err)
	orphan, _ := s.PutBlob([]byte("a blob nobody names"))
	age(t, s, orphan)
	gcAgent(t, s, "a", 12, Definition{Workspace: "/ws"})
	gcAgent(t, s, "b", 12, Definition{Workspace: "/ws"})
	bad := filepath.Join(s.Dir(), "agents", "a")
	before := agentFiles(t, bad)
	must(t, os.Chmod(bad, 0))
	got, err := s.Collect(Retention{})
	must(t, os.Chmod(bad, 0o700))
	if err != nil {
		t.Fatalf("collect: %v; want the agent skipped and the rest collected", err)
	}
	sameFiles(t, "gc of an agent it may not open", before, agentFiles(t, bad))
	if len(got.Unreadable) != 1 || got.Unreadable[0].Agent != "a" || got.BlobsKept == "" {
		t.Fatalf("collected %+v: want agent a named as unreadable and the blobs kept", got)
	}
	if _, err := s.Blob(orphan); err != nil {
		t.Fatalf("a blob was removed while an agent's blobs are unknown: %v", err)
	}
	if snaps, _ := listRounds(filepath.Join(s.Dir(), "agents", "b"), "snap-", ".cbor"); len(snaps) != 1 {
		t.Fatalf("agent b kept snapshots %v; want it collected", snaps)
	}
}
