package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Regression: gc stopped with an error at an agent it could not read (here
// one whose past file holds a frame of another type) and collected nothing
// for the agents after it. It now leaves that agent as it is, says on
// stderr which and why and what to do, collects the other agents, removes
// no blob (the damaged agent may refer to any), and exits 1. Once the
// agent is restored, gc removes the blobs nobody uses.
func TestGCGoesOnPastAnUnreadableAgent(t *testing.T) {
	agent, store, cache := crashAgent(t), t.TempDir(), cacheForTests(t)
	for _, id := range []string{"bad", "good"} { // bad is read first
		if code, _, errOut := cairn(t, "run", "--store", store, "--cache", cache, "--id", id, "-f", agent); code != exitDone {
			t.Fatalf("run %s: exit %d %s", id, code, errOut)
		}
	}
	bad, good := filepath.Join(store, "agents", "bad"), filepath.Join(store, "agents", "good")
	past, err := os.ReadFile(filepath.Join(bad, "past"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(bad, "past"), otherFrame(), 0o600))
	must(t, os.WriteFile(filepath.Join(good, "snap-00000000000000ff.cbor.tmp"), []byte("torn"), 0o600))
	orphan := agedBlob(t, store, "a blob no agent names")
	badBefore := hashDir(t, bad)

	code, out, errOut := cairn(t, "gc", "--store", store)
	if code != exitFailed || !strings.Contains(errOut, "left agent bad untouched: ") || !strings.Contains(errOut, "/past is corrupt") ||
		!strings.Contains(errOut, "kept every blob") || !strings.Contains(errOut, "run `cairn gc` again") {
		t.Fatalf("gc: exit %d, stderr %s; want %d, naming agent bad, why, and what to do", code, errOut, exitFailed)
	}
	if !strings.Contains(out, "removed agents/good/snap-00000000000000ff.cbor.tmp") {
		t.Fatalf("gc did not collect agent good:\n%s", out)
	}
	if hashDir(t, bad) != badBefore {
		t.Fatal("gc changed the agent it could not read")
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("gc removed a blob while an agent's blobs were unknown: %v", err)
	}
	if code, out, _ := cairn(t, "show", "--store", store, "good"); code != exitDone || !strings.Contains(out, "done") {
		t.Fatalf("show good after gc: exit %d\n%s", code, out)
	}

	must(t, os.WriteFile(filepath.Join(bad, "past"), past, 0o600)) // restored from a backup
	if code, out, errOut := cairn(t, "gc", "--store", store); code != exitDone || errOut != "" || !strings.Contains(out, "removed blobs/sha256/") {
		t.Fatalf("gc after the restore: exit %d, stderr %q\n%s", code, errOut, out)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("the unused blob is still there after the restore: %v", err)
	}
}

// otherFrame is a whole frame, its checksum right, of a type a past file
// does not hold (a journal's commit): damage, not a torn tail.
func otherFrame() []byte {
	payload := []byte{0xa0}
	h := make([]byte, 9, 9+len(payload))
	binary.LittleEndian.PutUint32(h, uint32(len(payload)))
	h[4] = 10
	table := crc32.MakeTable(crc32.Castagnoli)
	binary.LittleEndian.PutUint32(h[5:], crc32.Update(crc32.Checksum(h[:5], table), table, payload))
	return append(h, payload...)
}

// agedBlob stores content as a blob older than gc's grace and returns its
// path.
func agedBlob(t *testing.T, store, content string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	path := filepath.Join(store, "blobs", "sha256", hex.EncodeToString(sum[:]))
	must(t, os.WriteFile(path, []byte(content), 0o600))
	old := time.Now().Add(-2 * time.Hour)
	must(t, os.Chtimes(path, old, old))
	return path
}

// hashDir hashes the names and contents of a directory's files.
func hashDir(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	must(t, filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		h.Write([]byte(path + "\x00"))
		h.Write(b)
		return err
	}))
	return hex.EncodeToString(h.Sum(nil))
}
