package sandbox

import (
	"strings"
	"testing"
)

// linkCases are the path_link (old, new) and path_symlink (text, new)
// calls TestLinkRefusalComesAfterLinuxsAnswers makes.
var linkCases = []struct{ op, path, to string }{
	{"link", "missing", "new"}, {"link", "missing", "inside.txt"}, {"link", "inside.txt", "sub/kept"},
	{"link", "inside.txt", "lsub"}, {"link", "inside.txt", "ldangle"}, {"link", "inside.txt", "nodir/new"},
	{"link", "inside.txt", "inside.txt/new"}, {"link", "inside.txt", "new"}, {"link", "sub", "new"},
	{"link", "sub", "sub/kept"}, {"link", "ldangle", "new"}, {"link", "lfile", "new"},
	{"link", "inside.txt", "new/"}, {"link", "inside.txt", "sub/"}, {"link", "inside.txt/", "new"},
	{"link", "missing/", "new"}, {"link", "nodir/missing", "inside.txt"}, {"link", "lout/secret.txt", "new"},
	{"link", "inside.txt", "lout/secret.txt"}, {"link", "inside.txt", "lout/new"}, {"link", "lout/missing", "new"},
	{"link", "lsub/../inside.txt", "new"}, {"link", "inside.txt", "lsub/../sub/kept"},
	{"link", "missing/..", "new"}, {"link", "inside.txt/..", "new"}, {"link", "inside.txt", "sub/.."},
	{"link", "inside.txt", "missing/../new"}, {"link", "inside.txt", "lsub/."}, {"link", "inside.txt", ""},
	{"link", "", "new"},
	{"symlink", "x", "inside.txt"}, {"symlink", "x", "lsub"}, {"symlink", "x", "ldangle"},
	{"symlink", "x", "sub/kept"}, {"symlink", "x", "nodir/new"}, {"symlink", "x", "inside.txt/new"},
	{"symlink", "x", "new"}, {"symlink", "../outside", "new"}, {"symlink", "x", "new/"},
	{"symlink", "x", "sub/"}, {"symlink", "x", "lout/secret.txt"}, {"symlink", "x", "lout/new"},
	{"symlink", "", "new"}, {"symlink", "", "inside.txt"}, {"symlink", "x", "missing/.."},
	{"symlink", "x", "lsub/."}, {"symlink", "x", "sub/../new"}, {"symlink", "x", ""},
}

// Regression: path_link and path_symlink were EPERM whatever their paths
// named, where Linux answers ENOENT for a source (of a hard link) or a
// new name's directory that is not there, ENOTDIR for a file in their
// way, and EEXIST for a new name that is taken, before anything else; on
// a read-only mount, EROFS after those. So too of paths with "." and
// "..", walked as Linux walks them, and of empty ones (ENOENT, where
// wazero's said EINVAL of an empty link text). cairn gives those answers first,
// on a plain mount, a read-only one and an overlay, and still makes no
// link: what Linux would make is EPERM (EROFS on a read-only mount), and
// a path that leaves the mount, through a link to outside, is EPERM
// whatever is there.
func TestLinkRefusalComesAfterLinuxsAnswers(t *testing.T) {
	m := compile(t, "rawwasi")
	for _, c := range linkCases {
		for _, kind := range []string{"plain", "readonly", "overlay"} {
			l, ws := linkDotsFixture(t, t.TempDir()), linkDotsFixture(t, t.TempDir())
			want := linuxPathCall(l, c.op, c.path, c.to)
			switch {
			case strings.HasPrefix(c.path, "lout/") || strings.HasPrefix(c.to, "lout/"):
				want = "63" // what is outside is not the guest's to learn of
			case (want == "0" || want == "63") && kind == "readonly":
				// EROFS, which Linux answers before making the link, and
				// before refusing a directory's hard link (EPERM).
				want = "69"
			case want == "0":
				want = "63"
			}
			if got := cairnPathCall(t, m, kind, ws, c.op, c.path, c.to); got != want {
				t.Errorf("%s: %s %q %q: %s, want %s (Linux says %s)", kind, c.op, c.path, c.to, got, want,
					linuxPathCall(linkDotsFixture(t, t.TempDir()), c.op, c.path, c.to))
			}
			if g, w := treeOf(t, ws), treeOf(t, linkDotsFixture(t, t.TempDir())); g != w {
				t.Errorf("%s: %s %q %q: left\n%s\nwhere it was\n%s", kind, c.op, c.path, c.to, g, w)
			}
		}
	}
}
