package sandbox

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Regression: path_filestat_set_times without LOOKUP_SYMLINK_FOLLOW (what
// wasi-libc's utimensat with AT_SYMLINK_NOFOLLOW asks) opened the path
// for writing, following a symlink: a directory was EISDIR, a file the
// guest may not write EACCES, and a symlink to a file had its target's
// times set. As utimensat(2) does, a directory or a file has its times
// set, on a plain mount and an overlay (where times are not effects), and
// a symlink has its own set (see TestSymlinkTimesAreSetWithoutFollowing)
// and its target keeps its times; a symlink with a second name, which may
// be outside the mount, is EACCES, as a file with one is.
//
// Regression too: on an overlay, path_filestat_set_times of a workspace
// file with a second name (a hard link), which a plain mount refuses
// (EACCES) as it refuses to open one, succeeded with the flag (doing
// nothing, as times are not effects there); it is EACCES on both, with the
// flag or without. And on an overlay a file's path with a trailing slash
// had its times set, where utimensat(2) says ENOTDIR, as a plain mount
// does.
func TestSetTimesWithoutFollowAnswersAsLinux(t *testing.T) {
	want := map[string]string{"nofollow-sub": "0", "nofollow-ro.txt": "0", "nofollow-lfile": "0", "nofollow-lsub": "0",
		"nofollow-lhard": "2", "nofollow-hard": "2", "follow-hard": "2", "follow-slash-inside.txt": "54",
		"follow-slash-made.txt": "54"}
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			must(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644))
			must(t, os.WriteFile(filepath.Join(ws, "ro.txt"), []byte("ro"), 0o444))
			must(t, os.Symlink("inside.txt", filepath.Join(ws, "lfile")))
			must(t, os.Symlink("sub", filepath.Join(ws, "lsub")))
			outside := filepath.Join(t.TempDir(), "outside.txt")
			must(t, os.WriteFile(outside, []byte("outside"), 0o644))
			must(t, os.Link(outside, filepath.Join(ws, "hard")))
			outLink := filepath.Join(filepath.Dir(outside), "link")
			must(t, os.Symlink(outside, outLink))
			must(t, os.Link(outLink, filepath.Join(ws, "lhard")))
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			if kind == "overlay" {
				ov, _ := newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var out bytes.Buffer
			if _, err := compile(t, "rawwasi").Run(context.Background(), Policy{Args: []string{"nofollowtimes"}, Mounts: []Mount{mt}}, nil, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			wantErrnos(t, results(out.String()), want)
			if kind == "overlay" {
				return
			}
			set := time.Unix(12345, 0)
			for name, changed := range map[string]bool{"sub": true, "ro.txt": true, "inside.txt": false, "hard": false,
				"lfile": true, "lsub": true, "lhard": false} {
				fi, err := os.Lstat(filepath.Join(ws, name))
				must(t, err)
				if fi.ModTime().Equal(set) != changed {
					t.Errorf("%s: modified %v, want it set: %v", name, fi.ModTime(), changed)
				}
			}
		})
	}
}
