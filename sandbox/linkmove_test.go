package sandbox

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: a relative symlink is read from where it is, and a guest
// could move one a workspace holds, or a directory holding one, to
// another directory of a plain mount (cairn exec), turning a link that
// stays inside ("sub/up" -> "..") into one that leads outside ("up" ->
// ".."): the host, or anything following links on it after the call,
// then read the secret beside the workspace through it. A symlink, or a
// directory holding one, is now moved only within its own directory
// (EPERM otherwise), as an overlay refuses to move one at all.
// Nor is the directory a link leads to moved by naming the link with a
// trailing slash ("to-deep/", which os.Root follows, so that sub/deep
// moved to the top, its link leading outside): that is ENOTDIR, as
// rename(2) says.
func TestGuestMovesNoLinkOutOfItsWorkspace(t *testing.T) {
	want := map[string]map[string]string{
		"plain": {"sub/up-up": "63", "sub/up-sub/up2": "0", "sub/deep-deep": "63",
			"sub/deep-sub/deep2": "0", "sub/../sub/up2-up3": "63", "sub/plain-plain": "0", "to-deep/-moved": "54"},
		"overlay": {"sub/up-up": "63", "sub/up-sub/up2": "63", "sub/deep-deep": "63",
			"sub/deep-sub/deep2": "63", "sub/../sub/up2-up3": "44", "sub/plain-plain": "0", "to-deep/-moved": "54"},
	}
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "ws")
			must(t, os.WriteFile(filepath.Join(dir, "outside.txt"), []byte(secret), 0o644))
			must(t, os.MkdirAll(filepath.Join(ws, "sub", "deep"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "outside.txt"), []byte("inside"), 0o644))
			must(t, os.WriteFile(filepath.Join(ws, "sub", "plain"), []byte("plain"), 0o644))
			must(t, os.Symlink("..", filepath.Join(ws, "sub", "up")))
			must(t, os.Symlink("../../outside.txt", filepath.Join(ws, "sub", "deep", "lnk")))
			must(t, os.Symlink("sub/deep", filepath.Join(ws, "to-deep")))
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			var ov *overlay.Overlay
			var staging string
			if kind == "overlay" {
				ov, staging = newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			p := Policy{Args: []string{"linkmove"}, Mounts: []Mount{mt}}
			if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v: %s", err, stderr.String())
			}
			if ov != nil {
				effects, err := ov.Effects()
				must(t, err)
				must(t, overlay.Apply(ws, staging, effects))
			}
			got := results(stdout.String())
			for name, w := range want[kind] {
				if got["linkmove-"+name] != w {
					t.Errorf("rename %s: got errno %q, want %s", name, got["linkmove-"+name], w)
				}
			}
			err := filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.Type()&fs.ModeSymlink == 0 {
					return err
				}
				target, err := os.Readlink(p)
				must(t, err)
				if to := filepath.Join(filepath.Dir(p), target); to != ws && !strings.HasPrefix(to, ws+"/") {
					b, _ := os.ReadFile(filepath.Join(p, "outside.txt"))
					c, _ := os.ReadFile(p)
					t.Errorf("after the call %s -> %s leads outside the workspace, to %s (read through it: %q %q)",
						p, target, to, b, c)
				}
				return nil
			})
			must(t, err)
		})
	}
}
