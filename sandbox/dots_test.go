package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// Regression: wazero cleans a guest's path by its letters before a
// filesystem sees it, so the path functions took "." and ".." as no
// step at all: "inside.txt/.." was the mount's root and "missing/."
// "missing", where Linux says ENOTDIR and ENOENT. path_open with O_CREAT
// of "missing/." made a file missing, path_remove_directory of "empty/."
// removed empty and path_rename of it renamed it. Each now answers as
// Linux does (EINVAL where Linux says EBUSY), on a plain mount and an
// overlay, and changes nothing. A symlink before ".." is followed first,
// as Linux does (TestLinkDotsAnswerAsLinux), where it was EPERM.
func TestDotsOfAPathAnswerAsLinux(t *testing.T) {
	want := map[string]string{
		"mkdir-file-dotdot": "54", "mkdir-missing-dot-x": "44", "creat-missing-dot": "44",
		"open-missing-dotdot": "44", "open-sub-dotdot": "0", "stat-file-dot": "54",
		"readlink-sub-dot": "28", "unlink-file-dotdot": "54", "rmdir-empty-dot": "28",
		"rmdir-sub-dotdot": "55", "rename-empty-dot": "28", "rename-onto-empty-dotdot": "28",
		"stat-link-dot": "0", "stat-link-dotdot": "0", "stat-4094": "0",
	}
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			got := runDots(t, kind)
			// Regression: a path of 10 MB of "sub/.." was checked a
			// stat for each "..", millions of them in one host call with
			// no look at the call's deadline, and then cleaned to ".":
			// Linux says ENAMETOOLONG of any path past PATH_MAX.
			if got["dots-stat-long-dotdot"] != "37" {
				t.Errorf("stat of a path of 10 MB: errno %q, want 37 (ENAMETOOLONG)", got["dots-stat-long-dotdot"])
			}
			for name, w := range want {
				if got["dots-"+name] != w {
					t.Errorf("%s: got errno %q, want %s", name, got["dots-"+name], w)
				}
			}
		})
	}
}

// Regression: path_readlink into a buffer too small for the link's text
// was ERANGE (68) and wrote nothing, where readlink(2) fills the buffer
// with what fits and says how much.
func TestReadlinkFillsASmallBuffer(t *testing.T) {
	want := map[string]string{
		"readlink-1": "0 1 s---", "readlink-2": "0 2 su--", "readlink-3": "0 3 sub-", "readlink-64": "0 3 sub-",
	}
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			got := runDots(t, kind)
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: got %q, want %q", name, got[name], w)
				}
			}
		})
	}
}

// runDots runs rawwasi's dots on a workspace of inside.txt, sub/kept,
// the empty directory empty and lsub, a link to sub, mounted as kind
// says, and returns its results. It fails t if the call changed the
// workspace.
func runDots(t *testing.T, kind string) map[string]string {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, "empty"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "sub", "kept"), []byte("kept"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
	must(t, os.Symlink("sub", filepath.Join(ws, "lsub")))
	before := tree(t, ws)
	mt := Mount{HostPath: ws, GuestPath: "/work"}
	var ov *overlay.Overlay
	var staging string
	if kind == "overlay" {
		ov, staging = newOverlay(t, ws)
		mt = Mount{GuestPath: "/work", Overlay: ov}
	}
	var stdout, stderr bytes.Buffer
	p := Policy{Args: []string{"dots"}, Mounts: []Mount{mt}}
	if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v: %s", err, stderr.String())
	}
	if ov != nil {
		effects, err := ov.Effects()
		must(t, err)
		must(t, overlay.Apply(ws, staging, effects))
	}
	sameTree(t, "the workspace after the call", tree(t, ws), before)
	return results(stdout.String())
}
