package filepool

import (
	"errors"
	"path"
	"path/filepath"
	"testing"
)

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"a.txt", "a.txt"},
		{"./a.txt", "a.txt"},
		{"a//b/./c", "a/b/c"},
		{"a/b/../c", "a/c"},
		{"a/", "a"},
		{"..a", "..a"},
		{"a/..b", "a/..b"},
		{"notes/ünï.md", "notes/ünï.md"},
	} {
		got, err := CleanPath(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", ".", "./", "a/..", "/etc/passwd", "/", "..", "../x", "a/../../x",
		"a\\b", "..\\x", "a\x00b"} {
		if got, err := CleanPath(in); !errors.Is(err, ErrBadPath) {
			t.Errorf("CleanPath(%q) = %q, %v; want ErrBadPath", in, got, err)
		}
	}
}

// FuzzCleanPath checks that whatever a tool names, an accepted path is
// clean, relative, inside the workspace and stable under CleanPath.
func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"a", "a/b/../c", "../x", "/abs", "a\\b", ".", "a/./b//c/", "..a/..", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := CleanPath(in)
		if err != nil {
			if !errors.Is(err, ErrBadPath) {
				t.Fatalf("CleanPath(%q): error %v does not match ErrBadPath", in, err)
			}
			return
		}
		if got != path.Clean(got) || path.IsAbs(got) || got == "." || got == ".." ||
			len(got) >= 3 && got[:3] == "../" || !filepath.IsLocal(filepath.FromSlash(got)) {
			t.Fatalf("CleanPath(%q) = %q: not a clean path inside the workspace", in, got)
		}
		if again, err := CleanPath(got); err != nil || again != got {
			t.Fatalf("CleanPath(CleanPath(%q)) = %q, %v; want %q", in, again, err, got)
		}
	})
}
