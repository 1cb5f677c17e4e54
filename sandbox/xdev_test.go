package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Regression: path_rename from one mount to another was ENOSYS (52), as
// if the host had no path_rename, where rename(2) says EXDEV (75) of a
// rename across mount points and a program such as mv then copies. It
// is EXDEV, to a read-write mount, a read-only one and an overlay, and
// nothing moves.
func TestRenameAcrossMountsIsEXDEV(t *testing.T) {
	for _, second := range []string{"plain", "read-only", "overlay"} {
		t.Run(second, func(t *testing.T) {
			ws, other := t.TempDir(), t.TempDir()
			must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
			before, otherBefore := tree(t, ws), tree(t, other)
			mt := Mount{HostPath: other, GuestPath: "/other", ReadOnly: second == "read-only"}
			if second == "overlay" {
				ov, _ := newOverlay(t, other)
				mt = Mount{GuestPath: "/other", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			p := Policy{Args: []string{"xdev"}, Mounts: []Mount{{HostPath: ws, GuestPath: "/work"}, mt}}
			if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v: %s", err, stderr.String())
			}
			if got := results(stdout.String())["xdev"]; got != "75" {
				t.Errorf("errno %q, want 75 (EXDEV)", got)
			}
			sameTree(t, "the first mount", tree(t, ws), before)
			sameTree(t, "the second mount", tree(t, other), otherBefore)
		})
	}
}
