package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// verifiedAgent runs an agent whose built-in tools read, list, search,
// edit and write its workspace over three rounds, on a file store, with
// the agent file's record: as given, and returns its engine and the
// store's directory.
func verifiedAgent(t *testing.T, record string) (*Engine, string) {
	t.Helper()
	af := agentIn(t, `
name: audited
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
record: `+record+`
`, `
turns:
  - tool_calls: [{name: read_file, input: {path: notes.txt}}, {name: list_dir, input: {path: .}}]
  - tool_calls: [{name: edit_file, input: {path: notes.txt, old_text: two, new_text: TWO}}, {name: grep, input: {pattern: "o"}}]
  - tool_calls: [{name: write_file, input: {path: sub/new.txt, content: "made\n"}}]
  - text: done
`)
	ws := filepath.Join(af.Dir, "workspace")
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "other.md"), []byte("not read, only listed\n"), 0o600)
	eng, store := fileEngine(t)
	res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "audited", Prompt: "go"})
	if err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v %v", res, err)
	}
	return eng, store.(*checkpoint.FileStore).Dir()
}

func verify(t *testing.T, eng *Engine, opts VerifyOptions) *VerifyReport {
	t.Helper()
	rep, err := eng.Verify(context.Background(), "audited", opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// An honest run verifies: every call, run again in a fresh instance on
// what it saw, gives the same output and the same changes.
func TestVerifyHonestRun(t *testing.T) {
	eng, _ := verifiedAgent(t, "reads")
	rep := verify(t, eng, VerifyOptions{})
	if len(rep.Calls) != 5 || rep.Diverged != 0 || rep.Unrecorded != 0 {
		t.Fatalf("report %+v", rep)
	}
	for _, c := range rep.Calls {
		if c.Status != VerifyMatch {
			t.Errorf("call %s (%s, round %d): %s %v", c.Call, c.Tool, c.Round, c.Status, c.Divergences)
		}
	}
}

// --round and --call pick the calls verified; a pick of nothing is
// ErrNoSuchCall.
func TestVerifyPicks(t *testing.T) {
	eng, _ := verifiedAgent(t, "reads")
	rep := verify(t, eng, VerifyOptions{Round: 2})
	if len(rep.Calls) != 2 || rep.Calls[0].Tool != "edit_file" || rep.Calls[1].Tool != "grep" {
		t.Fatalf("round 2: %+v", rep.Calls)
	}
	one := verify(t, eng, VerifyOptions{Call: rep.Calls[1].Call})
	if len(one.Calls) != 1 || one.Calls[0].Tool != "grep" || one.Calls[0].Status != VerifyMatch {
		t.Fatalf("call %s: %+v", rep.Calls[1].Call, one.Calls)
	}
	for _, o := range []VerifyOptions{{Round: 9}, {Call: "nope"}} {
		if _, err := eng.Verify(context.Background(), "audited", o); !errors.Is(err, ErrNoSuchCall) {
			t.Errorf("%+v: %v, want ErrNoSuchCall", o, err)
		}
	}
}

// blobFile is where a file store keeps a blob.
func blobFile(storeDir, digest string) string {
	return filepath.Join(storeDir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
}

// A file's content changed in the store is a divergence of the calls that
// read it, naming the file; the others still match.
func TestVerifyFileChanged(t *testing.T) {
	eng, dir := verifiedAgent(t, "reads")
	digest := checkpoint.BlobDigest([]byte("one\ntwo\nthree\n"))
	if err := os.WriteFile(blobFile(dir, digest), []byte("one\n2\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := verify(t, eng, VerifyOptions{})
	byTool := map[string]VerifiedCall{}
	for _, c := range rep.Calls {
		byTool[c.Tool] = c
	}
	for _, tool := range []string{"read_file", "edit_file", "grep"} {
		c := byTool[tool]
		if c.Status != VerifyDiverged || !hasDivergence(c, DivergeFile, "notes.txt") {
			t.Errorf("%s: %s %v, want a divergence of notes.txt", tool, c.Status, c.Divergences)
		}
	}
	if c := byTool["write_file"]; c.Status != VerifyMatch {
		t.Errorf("write_file: %s %v", c.Status, c.Divergences)
	}
	if rep.Diverged != 3 {
		t.Errorf("diverged %d, want 3", rep.Diverged)
	}
}

// A module whose bytes changed in the store is a divergence of every call
// it ran; one missing from the store too.
func TestVerifyModuleChanged(t *testing.T) {
	eng, dir := verifiedAgent(t, "digests")
	rep := verify(t, eng, VerifyOptions{Round: 1})
	name := blobFile(dir, rep.Calls[0].Module)
	wasm, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	wasm[len(wasm)/2] ^= 0xff
	if err := os.WriteFile(name, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	rep = verify(t, eng, VerifyOptions{})
	if rep.Diverged != 5 {
		t.Fatalf("diverged %d, want 5: %+v", rep.Diverged, rep.Calls)
	}
	for _, c := range rep.Calls {
		if !hasDivergence(c, DivergeModule, "") || !strings.Contains(c.Divergences[0].Detail, "changed") {
			t.Errorf("%s: %v", c.Tool, c.Divergences)
		}
	}
	os.Remove(name)
	rep = verify(t, eng, VerifyOptions{Round: 3})
	if c := rep.Calls[0]; c.Status != VerifyDiverged || !strings.Contains(c.Divergences[0].Detail, "not in the store") {
		t.Errorf("missing module: %+v", c)
	}
}

func hasDivergence(c VerifiedCall, kind, path string) bool {
	for _, d := range c.Divergences {
		if d.Kind == kind && (path == "" || d.Path == path) {
			return true
		}
	}
	return false
}

// By default only digests are recorded. A call verifies with the content
// the store keeps anyway (the workspace's pasts hold every file the agent
// started with or wrote) or, failing that, on the workspace while it still
// holds what the call read; one whose content is in neither diverges,
// saying the content was not kept.
func TestVerifyDigestsOnly(t *testing.T) {
	eng, dir := verifiedAgent(t, "digests")
	for _, c := range verify(t, eng, VerifyOptions{}).Calls {
		if c.Status != VerifyMatch {
			t.Errorf("%s (round %d): %s %v, want match from the pasts' blobs", c.Tool, c.Round, c.Status, c.Divergences)
		}
	}
	if err := os.Remove(blobFile(dir, checkpoint.BlobDigest([]byte("one\ntwo\nthree\n")))); err != nil {
		t.Fatal(err)
	}
	for _, c := range verify(t, eng, VerifyOptions{}).Calls {
		want := VerifyMatch
		if c.Tool == "read_file" || c.Tool == "edit_file" || c.Tool == "grep" {
			want = VerifyDiverged // they read notes.txt, which round 2 edited
		}
		if c.Status != want {
			t.Errorf("%s (round %d): %s %v, want %s", c.Tool, c.Round, c.Status, c.Divergences, want)
		}
		if c.Status == VerifyDiverged && (!hasDivergence(c, DivergeFile, "notes.txt") || !strings.Contains(c.Divergences[0].Detail, "record: reads")) {
			t.Errorf("%s: %v", c.Tool, c.Divergences)
		}
	}
}

// An agent file's record: is digests or reads; anything else is refused.
func TestRecordMode(t *testing.T) {
	for _, v := range []string{"", "digests", "reads"} {
		if _, err := ParseAgentFile([]byte("name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\nrecord: "+v+"\n"), "."); err != nil {
			t.Errorf("record: %q: %v", v, err)
		}
	}
	_, err := ParseAgentFile([]byte("name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\nrecord: all\n"), ".")
	if err == nil || !strings.Contains(err.Error(), "want digests or reads") {
		t.Errorf("record: all: %v", err)
	}
}

// cairn gc keeps what recordings name: after a collection that removes
// every blob no one names, the run still verifies with the content kept.
func TestVerifyAfterCollect(t *testing.T) {
	eng, dir := verifiedAgent(t, "reads")
	stray, err := eng.Store().PutBlob([]byte("named by nothing"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Collect(t.Context(), eng.Store(), checkpoint.Retention{BlobGrace: time.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blobFile(dir, stray)); err == nil {
		t.Fatal("the collection removed nothing; the test proves nothing")
	}
	if rep := verify(t, eng, VerifyOptions{}); rep.Diverged != 0 || len(rep.Calls) != 5 {
		t.Fatalf("after gc: %+v", rep)
	}
}

// A recording whose paths were tampered with makes nothing outside the
// directory verify runs the call in.
func TestVerifyRecordedPathOutside(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	divs := testEngine.materialize(ws, "", []conversation.SeenFile{
		{Path: "../outside.txt", Size: 3}, {Path: "/etc/abs", Size: 1}, {Path: "a/../../up", Dir: true}, {Path: "fine.txt", Size: 2},
	})
	if len(divs) != 3 {
		t.Fatalf("divergences %v, want 3", divs)
	}
	for _, d := range divs {
		if d.Kind != DivergeFile || !strings.Contains(d.Detail, "outside the workspace") {
			t.Errorf("%v", d)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("made beside the workspace: %v", entries)
	}
	if fi, err := os.Stat(filepath.Join(ws, "fine.txt")); err != nil || fi.Size() != 2 {
		t.Errorf("fine.txt: %v %v", fi, err)
	}
}

// A call that could read what is not recorded (here, a mount outside the
// workspace) and differs is nondeterministic, with the reason, and does
// not count as a divergence.
func TestVerifyNondeterministic(t *testing.T) {
	af := agentIn(t, `
name: audited
model: {provider: script, script: script.yaml}
workspace: workspace
record: reads
tools: [{module: builtin, grant: {workspace: rw, mounts: [{host: data, guest: /data}]}}]
`, `
turns:
  - tool_calls: [{name: read_file, input: {path: notes.txt}}]
  - text: done
`)
	os.Mkdir(filepath.Join(af.Dir, "data"), 0o755)
	os.WriteFile(filepath.Join(af.Dir, "workspace", "notes.txt"), []byte("seen\n"), 0o644)
	eng, store := fileEngine(t)
	if res, err := eng.Run(context.Background(), RunOptions{Agent: af, ID: "audited", Prompt: "go"}); err != nil || res.Status != StatusDone {
		t.Fatalf("run: %+v %v", res, err)
	}
	if rep := verify(t, eng, VerifyOptions{}); rep.Calls[0].Status != VerifyMatch || len(rep.Calls[0].Notes) != 1 {
		t.Fatalf("honest: %+v", rep.Calls)
	}
	dir := store.(*checkpoint.FileStore).Dir()
	os.WriteFile(blobFile(dir, checkpoint.BlobDigest([]byte("seen\n"))), []byte("other\n"), 0o600)
	rep := verify(t, eng, VerifyOptions{})
	c := rep.Calls[0]
	if rep.Diverged != 0 || c.Status != VerifyNondeterministic || c.Notes[0] != "it could read mount /data, which is not recorded" {
		t.Fatalf("changed: %+v", rep)
	}
}
