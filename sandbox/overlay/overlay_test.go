package overlay_test

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/internal/dirtree"
	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// newOverlay makes an overlay of ws staged in a fresh directory.
func newOverlay(t testing.TB, ws string) (*overlay.Overlay, string) {
	t.Helper()
	staging := filepath.Join(t.TempDir(), "staging")
	ov, err := overlay.New(ws, staging)
	must(t, err)
	t.Cleanup(func() { ov.Close() })
	return ov, staging
}

// makeTree lays out files ("name": content) and directories ("name/": "")
// under dir.
func makeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// tree is everything under dir by slash path, as dirtree.Read gives it.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	m, err := dirtree.Read(dir)
	must(t, err)
	return m
}

func sameTree(t testing.TB, what string, got, want map[string]string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

func fileV(content string) overlay.Version {
	return overlay.Version{Exists: true, Hash: sha256.Sum256([]byte(content)), Size: int64(len(content))}
}

// The guest reads the workspace through the overlay, including a file
// added after the overlay was made, and its own writes; the workspace
// does not change until overlay.Apply, and then exactly as the guest saw it.
func TestOverlayWritesReachWorkspaceOnlyOnApply(t *testing.T) {
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"a.txt": "one", "sub/b.txt": "two"})
	ov, staging := newOverlay(t, ws)
	makeTree(t, ws, map[string]string{"late.txt": "late"})
	before := tree(t, ws)

	got := ovprog(t, sandbox.Mount{Overlay: ov}, "cat:/work/a.txt", "cat:/work/late.txt", "write:/work/a.txt:ONE",
		"append:/work/sub/b.txt:+", "write:/work/new.txt:new", "cat:/work/a.txt", "cat:/work/sub/b.txt", "ls:/work")
	want := []string{`cat /work/a.txt "one"`, `cat /work/late.txt "late"`, "write /work/a.txt ok",
		"append /work/sub/b.txt ok", "write /work/new.txt ok", `cat /work/a.txt "ONE"`, `cat /work/sub/b.txt "two+"`,
		"ls /work [a.txt late.txt new.txt sub/]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("guest saw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sameTree(t, "workspace before overlay.Apply", tree(t, ws), before)

	effects, err := ov.Effects()
	must(t, err)
	wantEffects := overlay.Effects{
		{Path: "a.txt", Op: overlay.OpWrite, Base: fileV("one"), New: fileV("ONE"), Mode: 0o644},
		{Path: "new.txt", Op: overlay.OpWrite, New: fileV("new"), Mode: 0o644},
		{Path: "sub/b.txt", Op: overlay.OpWrite, Base: fileV("two"), New: fileV("two+"), Mode: 0o644},
	}
	if !reflect.DeepEqual(effects, wantEffects) {
		t.Fatalf("effects:\n got %+v\nwant %+v", effects, wantEffects)
	}
	must(t, overlay.Apply(ws, staging, effects))
	sameTree(t, "workspace after overlay.Apply", tree(t, ws), map[string]string{
		"a.txt": "ONE", "late.txt": "late", "new.txt": "new", "sub/": "", "sub/b.txt": "two+"})
	must(t, overlay.Discard(staging))
	if _, err := os.Stat(staging); !os.IsNotExist(err) {
		t.Errorf("staging survived Discard: %v", err)
	}
}

// Two calls on overlays of one workspace each see the workspace as it was
// plus their own writes, never the other's.
func TestOverlaysOfOneWorkspaceAreIndependent(t *testing.T) {
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"a.txt": "orig"})
	ov1, _ := newOverlay(t, ws)
	ov2, _ := newOverlay(t, ws)
	got1 := ovprog(t, sandbox.Mount{Overlay: ov1}, "write:/work/a.txt:first", "write:/work/only1.txt:1", "cat:/work/a.txt")
	got2 := ovprog(t, sandbox.Mount{Overlay: ov2}, "cat:/work/a.txt", "ls:/work", "write:/work/a.txt:second", "cat:/work/a.txt")
	if got1[2] != `cat /work/a.txt "first"` {
		t.Errorf("first call: %v", got1)
	}
	want2 := []string{`cat /work/a.txt "orig"`, "ls /work [a.txt]", "write /work/a.txt ok", `cat /work/a.txt "second"`}
	if !reflect.DeepEqual(got2, want2) {
		t.Errorf("second call saw the first's writes:\n%s", strings.Join(got2, "\n"))
	}
	sameTree(t, "workspace", tree(t, ws), map[string]string{"a.txt": "orig"})
}

// Deletions, directories and renames: the guest sees on the overlay
// exactly what it sees on a plain mount, and after overlay.Apply the workspace is
// what the plain mount's became.
func TestOverlayMatchesPlainMount(t *testing.T) {
	layout := map[string]string{"a.txt": "a", "gone.txt": "bye", "dir/x.txt": "x", "dir/sub/y.txt": "y",
		"old/": "", "keep/k.txt": "k"}
	for _, tc := range []struct {
		name string
		ops  []string
	}{
		{"delete", []string{"rm:/work/gone.txt", "cat:/work/gone.txt", "ls:/work", "rm:/work/gone.txt"}},
		{"mkdir", []string{"mkdir:/work/made", "mkdir:/work/made", "write:/work/made/f.txt:f", "ls:/work/made", "stat:/work/made"}},
		{"rmdir", []string{"rmdir:/work/dir", "rm:/work/dir/sub/y.txt", "rmdir:/work/dir/sub", "rmdir:/work/old", "ls:/work/dir", "stat:/work/old"}},
		{"rename-file", []string{"mv:/work/a.txt:/work/keep/a2.txt", "cat:/work/keep/a2.txt", "cat:/work/a.txt", "mv:/work/keep/k.txt:/work/gone.txt", "cat:/work/gone.txt", "ls:/work/keep"}},
		{"rename-staged", []string{"write:/work/n.txt:n", "mv:/work/n.txt:/work/m.txt", "append:/work/m.txt:+", "cat:/work/m.txt", "ls:/work"}},
		{"rename-dir", []string{"write:/work/dir/new.txt:new", "mv:/work/dir:/work/moved", "ls:/work/moved", "ls:/work/moved/sub", "cat:/work/moved/sub/y.txt", "stat:/work/dir", "mv:/work/moved:/work/moved/in"}},
		{"rename-dir-onto-empty", []string{"mv:/work/dir:/work/old", "ls:/work/old", "mv:/work/keep:/work/old"}},
		{"replace-kinds", []string{"rm:/work/a.txt", "mkdir:/work/a.txt", "write:/work/a.txt/in:in", "rm:/work/dir/x.txt", "rm:/work/dir/sub/y.txt", "rmdir:/work/dir/sub", "rmdir:/work/dir", "write:/work/dir:file now", "ls:/work", "cat:/work/dir"}},
		{"rewrite-staged-shorter", []string{"write:/work/a.txt:a long line", "write:/work/a.txt:short", "cat:/work/a.txt"}},
		{"trunc", []string{"trunc:/work/a.txt:0", "cat:/work/a.txt", "trunc:/work/keep/k.txt:3", "cat:/work/keep/k.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := t.TempDir()
			makeTree(t, plain, layout)
			want := ovprog(t, sandbox.Mount{HostPath: plain}, tc.ops...)

			ws := t.TempDir()
			makeTree(t, ws, layout)
			ov, staging := newOverlay(t, ws)
			before := tree(t, ws)
			got := ovprog(t, sandbox.Mount{Overlay: ov}, tc.ops...)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("overlay:\n%s\nplain mount:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			sameTree(t, "workspace before overlay.Apply", tree(t, ws), before)
			effects, err := ov.Effects()
			must(t, err)
			must(t, overlay.Apply(ws, staging, effects))
			sameTree(t, "workspace after overlay.Apply", tree(t, ws), tree(t, plain))
		})
	}
}
