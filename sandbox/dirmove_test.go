package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: a directory's descriptor followed its name, not the
// directory: after the guest renamed it, paths relative to it were
// resolved at its old name (ENOENT), and once another directory was made
// at that name, in that one. On Linux a descriptor keeps to its
// directory, and now so does a guest's, on a plain mount and on an
// overlay, through renames of it and of the directories above it. A
// directory replaced by another renamed onto it is gone (ENOENT), as a
// removed one is. On a plain mount, one moved out of the mount by anyone
// else (the host, here, while the guest holds it) is gone too: nothing is
// made, described, listed or given times outside the workspace through
// it. (An
// overlay's call sees the workspace as it was, plus its own changes.)
// The "." and ".." of a path relative to a renamed directory are walked
// there too; a ".." past the descriptor's directory stays EPERM (see
// docs/wasi.md).
func TestDirectoryFollowsItsRenames(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			want := map[string]string{
				"dirmove-open": "0", "dirmove-rename": "0", "dirmove-stat": "0", "dirmove-create": "0",
				"dirmove-remake": "0", "dirmove-create-again": "0", "dirmove-mkdir": "0", "dirmove-open-sub": "0",
				"dirmove-rename-above": "0", "dirmove-create-sub": "0", "dirmove-rename-in": "0",
				"dirmove-readdir": "0 true", "dirmove-dots": "0 63 0", "dirmove-mkdir-empty": "0", "dirmove-open-empty": "0",
				"dirmove-mkdir-other": "0", "dirmove-rename-over": "0", "dirmove-create-over": "44",
				"dirmove-out-stat": "44", "dirmove-out-create": "44", "dirmove-out-mkdir": "44",
				"dirmove-out-readdir": "44 false", "dirmove-out-times": "44",
			}
			dir := t.TempDir()
			ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
			must(t, os.MkdirAll(filepath.Join(ws, "d"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "d", "in.txt"), []byte("in"), 0o644))
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			if kind == "overlay" {
				ov, _ := newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
				want["dirmove-out-stat"], want["dirmove-out-create"], want["dirmove-out-mkdir"] = "0", "0", "0"
				want["dirmove-out-readdir"], want["dirmove-out-times"] = "0 true", "0"
			}
			moved := false
			stderr := writerFunc(func(b []byte) (int, error) {
				if strings.Contains(string(b), "move") && !moved && kind == "plain" {
					moved = true
					must(t, os.Rename(filepath.Join(ws, "f"), outside))
				}
				return len(b), nil
			})
			var out bytes.Buffer
			p := Policy{Args: []string{"dirmove"}, Mounts: []Mount{mt}}
			if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &out, stderr); err != nil {
				t.Fatalf("run: %v", err)
			}
			got := results(out.String())
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: %q, want %q", name, got[name], w)
				}
			}
			if kind != "plain" {
				return
			}
			if !moved {
				t.Fatal("the guest did not ask for its directory to be moved")
			}
			// What the guest made through its descriptors is in the
			// directory they hold, and nothing once it was moved out.
			for _, p := range []string{"in.txt", "made2.txt", "sub/deep.txt", "sub/moved.txt"} {
				if _, err := os.Stat(filepath.Join(outside, p)); err != nil {
					t.Errorf("%s is not in the directory the descriptor holds: %v", p, err)
				}
			}
			for _, p := range []string{"escaped.txt", "sub/escaped", "made.txt"} {
				if _, err := os.Stat(filepath.Join(outside, p)); err == nil {
					t.Errorf("%s was made through a directory moved out of the mount", p)
				}
			}
			if _, err := os.Stat(filepath.Join(ws, "d", "made2.txt")); err == nil {
				t.Error("made2.txt was made in the directory made at the old name")
			}
		})
	}
}
