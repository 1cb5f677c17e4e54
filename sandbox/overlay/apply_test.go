package overlay_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// applyLayout and applyOps make a call whose effects touch every phase of
// Apply: files written in place, made in new directories, deleted; a
// directory removed; a file replaced by a directory and a directory by a
// file; a rename.
var (
	applyLayout = map[string]string{"a.txt": "a", "gone.txt": "bye", "dir/x.txt": "x", "dir/sub/y.txt": "y",
		"f": "file", "keep/k.txt": "k"}
	applyOps = []string{"write:/work/a.txt:A", "rm:/work/gone.txt", "mkdir:/work/new", "mkdir:/work/new/deeper",
		"write:/work/new/deeper/n.txt:n", "rm:/work/dir/sub/y.txt", "rmdir:/work/dir/sub", "rm:/work/dir/x.txt",
		"rmdir:/work/dir", "write:/work/dir:dir is a file now", "rm:/work/f", "mkdir:/work/f", "write:/work/f/in.txt:in",
		"mv:/work/keep/k.txt:/work/k-moved.txt"}
)

// stagedCall runs applyOps on an overlay of a fresh applyLayout, and
// returns the staging directory, the effects, and the tree a plain mount
// ends with after the same operations.
func stagedCall(t *testing.T) (string, overlay.Effects, map[string]string) {
	t.Helper()
	plain := t.TempDir()
	makeTree(t, plain, applyLayout)
	ovprog(t, sandbox.Mount{HostPath: plain}, applyOps...)
	ws := t.TempDir()
	makeTree(t, ws, applyLayout)
	ov, staging := newOverlay(t, ws)
	ovprog(t, sandbox.Mount{Overlay: ov}, applyOps...)
	effects, err := ov.Effects()
	must(t, err)
	return staging, effects, tree(t, plain)
}

// freshWorkspace is applyLayout in a new directory.
func freshWorkspace(t *testing.T) string {
	ws := t.TempDir()
	makeTree(t, ws, applyLayout)
	return ws
}

// crashAfter is a crash hook that lets n steps through and stops the next.
func crashAfter(n int) func() bool {
	return func() bool {
		n--
		return n < 0
	}
}

// overlay.Apply stopped at every one of its steps, as if the process had died
// there, and run again (once, or stopped again at the same step first)
// leaves the workspace exactly as an uninterrupted overlay.Apply does, with no
// temporary file behind.
func TestApplyCrashAtEveryStep(t *testing.T) {
	staging, effects, want := stagedCall(t)
	steps := 0
	for k := 0; ; k++ {
		ws := freshWorkspace(t)
		err := overlay.ApplyCrashing(ws, staging, effects, crashAfter(k))
		if err == nil {
			steps = k
			sameTree(t, "uncrashed apply", tree(t, ws), want)
			break
		}
		if !errors.Is(err, overlay.ErrCrash) {
			t.Fatalf("crash after %d steps: %v", k, err)
		}
		if k%2 == 1 {
			if err := overlay.ApplyCrashing(ws, staging, effects, crashAfter(k)); err != nil && !errors.Is(err, overlay.ErrCrash) {
				t.Fatalf("second crash after %d steps: %v", k, err)
			}
		}
		if c, err := overlay.Check(ws, effects); err != nil || len(c) > 0 {
			t.Fatalf("after a crash at step %d, Check: %v %v", k, c, err)
		}
		must(t, overlay.Apply(ws, staging, effects))
		sameTree(t, fmt.Sprint("workspace after a crash at step ", k), tree(t, ws), want)
	}
	if steps < 10 {
		t.Fatalf("overlay.Apply took %d steps; the crash test covered too little", steps)
	}
}

// Applying the same effects again changes nothing: no file is rewritten
// (same inode) and the tree is the same.
func TestApplyTwice(t *testing.T) {
	staging, effects, want := stagedCall(t)
	ws := freshWorkspace(t)
	must(t, overlay.Apply(ws, staging, effects))
	inodes := func() map[string]uint64 {
		m := map[string]uint64{}
		for p := range tree(t, ws) {
			fi, err := os.Lstat(filepath.Join(ws, p))
			must(t, err)
			m[p] = fi.Sys().(*syscall.Stat_t).Ino
		}
		return m
	}
	first := inodes()
	must(t, overlay.Apply(ws, staging, effects))
	sameTree(t, "after the second overlay.Apply", tree(t, ws), want)
	if second := inodes(); !reflect.DeepEqual(first, second) {
		t.Errorf("the second overlay.Apply rewrote files:\n%v\n%v", first, second)
	}
	if c, err := overlay.Check(ws, effects); err != nil || len(c) > 0 {
		t.Errorf("overlay.Check after Apply: %v %v", c, err)
	}
}

// overlay.Check finds what changed in the workspace after the call saw it, and
// overlay.Apply refuses those effects without changing anything. A path already
// as the call left it is no conflict.
func TestCheckAndApplyRefuseConflicts(t *testing.T) {
	for _, tc := range []struct {
		name, ops, path, reason string
		outside                 func(ws string) error
	}{
		{"changed", "write:/work/a.txt:mine", "a.txt", "changed", func(ws string) error {
			return os.WriteFile(filepath.Join(ws, "a.txt"), []byte("theirs"), 0o644)
		}},
		{"changed-same-size", "write:/work/a.txt:mine", "a.txt", "changed", func(ws string) error {
			return os.WriteFile(filepath.Join(ws, "a.txt"), []byte("b"), 0o644)
		}},
		{"created", "write:/work/new.txt:mine", "new.txt", "created", func(ws string) error {
			return os.WriteFile(filepath.Join(ws, "new.txt"), []byte("theirs"), 0o644)
		}},
		{"removed", "write:/work/a.txt:mine", "a.txt", "removed", func(ws string) error {
			return os.Remove(filepath.Join(ws, "a.txt"))
		}},
		{"removed-by-both", "rm:/work/a.txt", "", "", func(ws string) error {
			return os.Remove(filepath.Join(ws, "a.txt"))
		}},
		{"symlink", "write:/work/a.txt:mine", "a.txt", "symlink", func(ws string) error {
			os.Remove(filepath.Join(ws, "a.txt"))
			return os.Symlink("b.txt", filepath.Join(ws, "a.txt"))
		}},
		{"dir-gained-entry", "rm:/work/d/x.txt rmdir:/work/d", "d", "holds extra", func(ws string) error {
			return os.WriteFile(filepath.Join(ws, "d", "extra"), nil, 0o644)
		}},
		{"parent-gone", "write:/work/d/new.txt:n", "d/new.txt", "directory d is gone", func(ws string) error {
			return os.RemoveAll(filepath.Join(ws, "d"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			makeTree(t, ws, map[string]string{"a.txt": "a", "d/x.txt": "x"})
			ov, staging := newOverlay(t, ws)
			ovprog(t, sandbox.Mount{Overlay: ov}, append(strings.Fields(tc.ops), "write:/work/other.txt:o")...)
			effects, err := ov.Effects()
			must(t, err)
			must(t, tc.outside(ws))
			before := tree(t, ws)

			conflicts, err := overlay.Check(ws, effects)
			must(t, err)
			if tc.path == "" {
				if len(conflicts) > 0 {
					t.Fatalf("conflicts %v, want none", conflicts)
				}
				must(t, overlay.Apply(ws, staging, effects))
				return
			}
			if len(conflicts) != 1 || conflicts[0].Path != tc.path || !strings.Contains(conflicts[0].Reason, tc.reason) {
				t.Fatalf("conflicts %v, want one on %s saying %q", conflicts, tc.path, tc.reason)
			}
			err = overlay.Apply(ws, staging, effects)
			if !errors.Is(err, overlay.ErrConflict) || !strings.Contains(err.Error(), tc.path+": ") || strings.Contains(err.Error(), "more)") {
				t.Fatalf("Apply: %v, want the conflict", err)
			}
			sameTree(t, "workspace after a refused overlay.Apply", tree(t, ws), before)
		})
	}
}

// overlay.Apply refuses a staged file whose content is not its effect's, and
// leaves the path and no temporary file behind.
func TestApplyRefusesTamperedStaging(t *testing.T) {
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"a.txt": "a"})
	ov, staging := newOverlay(t, ws)
	ovprog(t, sandbox.Mount{Overlay: ov}, "write:/work/a.txt:mine")
	effects, err := ov.Effects()
	must(t, err)
	must(t, os.WriteFile(filepath.Join(staging, overlay.BlobName("a.txt")), []byte("evil"), 0o600))
	if err := overlay.Apply(ws, staging, effects); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("Apply: %v, want a mismatch", err)
	}
	sameTree(t, "workspace", tree(t, ws), map[string]string{"a.txt": "a"})
}

// A crashed overlay.Apply's temporary file, and one a user made with that name,
// never survive a later overlay.Apply; a guest cannot make one.
func TestApplyTempNamesAreReserved(t *testing.T) {
	ws := t.TempDir()
	ov, staging := newOverlay(t, ws)
	got := ovprog(t, sandbox.Mount{Overlay: ov}, "write:/work/"+filepath.Base(overlay.TempName("a.txt"))+":x", "write:/work/a.txt:a")
	if !strings.Contains(got[0], "err") {
		t.Errorf("a guest made a file named like overlay.Apply's temporary files: %s", got[0])
	}
	effects, err := ov.Effects()
	must(t, err)
	must(t, os.WriteFile(filepath.Join(ws, overlay.TempName("a.txt")), []byte("left by a crash"), 0o600))
	must(t, overlay.Apply(ws, staging, effects))
	sameTree(t, "workspace", tree(t, ws), map[string]string{"a.txt": "a"})
}
