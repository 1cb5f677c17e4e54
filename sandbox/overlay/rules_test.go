package overlay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Symlinks already in the workspace are read through while they stay
// inside it, and never written through, replaced or removed.
func TestOverlaySymlinks(t *testing.T) {
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"real/f.txt": "f", "t.txt": "t"})
	must(t, os.Symlink("real", filepath.Join(ws, "linkdir")))
	must(t, os.Symlink("t.txt", filepath.Join(ws, "link.txt")))
	before := tree(t, ws)
	ov, staging := newOverlay(t, ws)
	got := ovprog(t, sandbox.Mount{Overlay: ov}, "cat:/work/linkdir/f.txt", "cat:/work/link.txt",
		"write:/work/linkdir/f.txt:x", "write:/work/linkdir/new.txt:x", "write:/work/link.txt:x",
		"rm:/work/link.txt", "mv:/work/link.txt:/work/moved", "mv:/work/t.txt:/work/link.txt", "mkdir:/work/linkdir/d",
		"ls:/work")
	want := []string{`cat /work/linkdir/f.txt "f"`, `cat /work/link.txt "t"`}
	for _, line := range got[2:9] {
		if !strings.Contains(line, "Operation not permitted") {
			t.Errorf("not refused: %s", line)
		}
	}
	if !reflect.DeepEqual(got[:2], want) || got[9] != "ls /work [link.txt linkdir real/ t.txt]" {
		t.Errorf("guest saw:\n%s", strings.Join(got, "\n"))
	}
	effects, err := ov.Effects()
	must(t, err)
	if len(effects) != 0 {
		t.Errorf("refused changes left effects: %+v", effects)
	}
	must(t, overlay.Apply(ws, staging, effects))
	sameTree(t, "workspace", tree(t, ws), before)
}

// An overlay made without staging refuses every change, even on a mount
// the policy leaves writable, and lists what the call read.
func TestOverlayWithoutStaging(t *testing.T) {
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"a.txt": "a", "sub/b.txt": "b"})
	before := tree(t, ws)
	ov, err := overlay.New(ws, "")
	must(t, err)
	defer ov.Close()
	got := ovprog(t, sandbox.Mount{Overlay: ov}, "cat:/work/a.txt", "write:/work/c.txt:x", "append:/work/a.txt:x",
		"rm:/work/sub/b.txt", "mkdir:/work/d", "mv:/work/a.txt:/work/e.txt")
	if got[0] != `cat /work/a.txt "a"` {
		t.Errorf("read: %s", got[0])
	}
	for _, l := range got[1:] {
		if !strings.Contains(l, "Read-only file system") {
			t.Errorf("not refused: %s", l)
		}
	}
	if reads := ov.Reads(); !slices.Equal(reads, []string{"a.txt"}) {
		t.Errorf("reads %q, want [a.txt]", reads)
	}
	effects, err := ov.Effects()
	must(t, err)
	if len(effects) != 0 {
		t.Errorf("effects %+v", effects)
	}
	sameTree(t, "workspace", tree(t, ws), before)
}

// Past the policy's staging limit a write fails (EDQUOT, as past a
// quota), Exhausted says why, and the staged bytes stay within the limit.
func TestOverlayStagingLimit(t *testing.T) {
	const limit = 1 << 20
	ws := t.TempDir()
	makeTree(t, ws, map[string]string{"big.txt": strings.Repeat("b", 600<<10)})
	ov, staging := newOverlay(t, ws)
	var stdout, stderr bytes.Buffer
	ops := []string{"fill:/work/fill.bin:4194304", "append:/work/big.txt:more", "write:/work/small.txt:s"}
	ex, err := compile(t, "ovprog").Run(context.Background(), sandbox.Policy{Args: ops, StagingLimit: limit,
		Mounts: []sandbox.Mount{{GuestPath: "/work", Overlay: ov}}}, nil, &stdout, &stderr)
	if err != nil || ex.Code != 0 {
		t.Fatalf("run: %v, exit %d: %s", err, ex.Code, stderr.String())
	}
	got := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	// The file's own path costs overlay.NodeCost of the limit; the rest is bytes.
	want := []string{fmt.Sprintf("fill /work/fill.bin wrote %d err write /work/fill.bin: Quota exceeded", limit-overlay.NodeCost),
		"append /work/big.txt err open /work/big.txt: Quota exceeded", "write /work/small.txt ok err open /work/small.txt: Quota exceeded"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("writes past the limit:\n%s", stdout.String())
	}
	if !(ov.Exhausted() != nil) {
		t.Error("Exhausted is false")
	}
	var staged int64
	entries, _ := os.ReadDir(staging)
	for _, e := range entries {
		fi, err := e.Info()
		must(t, err)
		staged += fi.Size()
	}
	if staged != limit-overlay.NodeCost {
		t.Errorf("%d bytes staged with a limit of %d", staged, limit)
	}
}

// The limit also holds with the default policy: a call under it is not
// Exhausted.
func TestOverlayUnderLimit(t *testing.T) {
	ws := t.TempDir()
	ov, _ := newOverlay(t, ws)
	got := ovprog(t, sandbox.Mount{Overlay: ov}, "fill:/work/f.bin:1048576")
	if got[0] != "fill /work/f.bin wrote 1048576" || (ov.Exhausted() != nil) {
		t.Errorf("%v, exhausted %v", got, (ov.Exhausted() != nil))
	}
}

// fsprog, an ordinary WASI program, prints the same on an overlay as on a
// plain mount, and overlay.Apply then leaves the same workspace.
func TestOverlayRunsFsprogLikePlainMount(t *testing.T) {
	layout := map[string]string{"gone.txt": "bye", "log.txt": "first\n", "keep/k.txt": "k"}
	run := func(mt sandbox.Mount) string {
		mt.GuestPath = "/work"
		var stdout bytes.Buffer
		ex, err := compile(t, "fsprog").Run(context.Background(), sandbox.Policy{Args: []string{"/work"}, Mounts: []sandbox.Mount{mt}}, nil, &stdout, &stdout)
		if err != nil || ex.Code != 0 {
			t.Fatalf("fsprog: %v, exit %d: %s", err, ex.Code, stdout.String())
		}
		return stdout.String()
	}
	plain := t.TempDir()
	makeTree(t, plain, layout)
	want := run(sandbox.Mount{HostPath: plain})
	ws := t.TempDir()
	makeTree(t, ws, layout)
	ov, staging := newOverlay(t, ws)
	if got := run(sandbox.Mount{Overlay: ov}); got != want {
		t.Fatalf("overlay:\n%s\nplain mount:\n%s", got, want)
	}
	effects, err := ov.Effects()
	must(t, err)
	must(t, overlay.Apply(ws, staging, effects))
	sameTree(t, "workspace", tree(t, ws), tree(t, plain))
}

// A flood of small files stops at MaxStagedPaths, and, with a small
// StagingLimit, at the bytes limit too: every path costs a block of it, so
// many small files reach it. The guest sees EDQUOT at the first file past
// the limit and the overlay says which limit it was.
func TestOverlayFloodLimits(t *testing.T) {
	for _, tt := range []struct {
		name  string
		p     sandbox.Policy
		first int // the first file refused
		says  string
	}{
		{"paths", sandbox.Policy{MaxStagedPaths: 10}, 10, "more than 10 paths"},
		{"bytes", sandbox.Policy{StagingLimit: 10 * overlay.NodeCost}, 9, "more than 40960 bytes of changes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ov, staging := newOverlay(t, t.TempDir())
			tt.p.Args = []string{"many:/work:100"}
			tt.p.Mounts = []sandbox.Mount{{GuestPath: "/work", Overlay: ov}}
			var stdout bytes.Buffer
			_, err := compile(t, "ovprog").Run(context.Background(), tt.p, nil, &stdout, io.Discard)
			must(t, err)
			want := fmt.Sprintf("many /work err open /work/f%03d: Quota exceeded\n", tt.first)
			if stdout.String() != want {
				t.Fatalf("got %q, want %q", stdout.String(), want)
			}
			if err := ov.Exhausted(); !errors.Is(err, overlay.ErrStagingLimit) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("exhausted: %v, want one that says %q", err, tt.says)
			}
			if entries, _ := os.ReadDir(staging); len(entries) != tt.first {
				t.Fatalf("%d files staged, want %d", len(entries), tt.first)
			}
		})
	}
}
