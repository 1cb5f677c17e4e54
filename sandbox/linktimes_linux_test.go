package sandbox

import (
	"strings"
	"testing"
)

// Regression: path_filestat_set_times without LOOKUP_SYMLINK_FOLLOW of a
// symlink was EPERM, where Linux's utimensat(2) with AT_SYMLINK_NOFOLLOW
// sets the link's own times. On a plain mount they are set, and read
// back as Linux reads them, without following the link, even one that
// leads outside the mount or nowhere; a path that leaves the mount is
// still EPERM. On an overlay, where times are not effects, the call
// answers as Linux does and keeps nothing.
func TestSymlinkTimesAreSetWithoutFollowing(t *testing.T) {
	m := compile(t, "rawwasi")
	for _, path := range []string{"inside.txt", "sub", "lfile", "lsub", "ldangle", "lloop", "lout", "labs",
		"lchain", "sub/up", "lsub/", "lfile/", "lsub/../lfile", "lout/secret.txt", "missing"} {
		for _, kind := range mountKinds {
			l, ws := linkDotsFixture(t, t.TempDir()), linkDotsFixture(t, t.TempDir())
			want := linuxPathCall(l, "lsettimes", path, "")
			if strings.HasPrefix(path, "lout/") {
				want = "63"
			}
			got := cairnPathCall(t, m, kind, ws, "lsettimes", path, "")
			if kind == "overlay" {
				want, got = strings.Fields(want)[0], strings.Fields(got)[0]
			}
			if got != want {
				t.Errorf("%s: set the times of %q without following: %s, Linux says %s", kind, path, got, want)
			}
		}
	}
}
