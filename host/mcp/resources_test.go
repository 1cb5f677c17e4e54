package mcp

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestRelPath(t *testing.T) {
	r := &resources{dir: "/w s", prefix: "file:///w%20s/"}
	tests := []struct {
		uri, want string
	}{
		{"file:///w%20s/a.txt", "a.txt"},
		{"file:///w%20s/d/b%20c.txt", "d/b c.txt"},
		{"file:///w%20s/../etc/passwd", ""},
		{"file:///w%20s/%2e%2e/x", ""},
		{"file:///w%20s/d/../../x", ""},
		{"file:///w%20s/", ""},
		{"file:///w%20s//abs", ""},
		{"file:///etc/passwd", ""},
		{"http://x/w%20s/a", ""},
	}
	for _, tt := range tests {
		got, err := r.relPath(tt.uri)
		if tt.want == "" && err == nil {
			t.Errorf("%s: %q, want an error", tt.uri, got)
		}
		if tt.want != "" && (err != nil || got != filepath.FromSlash(tt.want)) {
			t.Errorf("%s: %q %v, want %q", tt.uri, got, err, tt.want)
		}
	}
}

// FuzzRelPath holds a client's URI, whatever it is, to a path inside the
// workspace: relative, clean, never climbing out.
func FuzzRelPath(f *testing.F) {
	for _, s := range []string{"file:///w/a.txt", "file:///w/../x", "file:///w/%2e%2e/x", "file:///w/a/./b", "file:///w/a%00b"} {
		f.Add(s)
	}
	r := &resources{dir: "/w", prefix: "file:///w/"}
	f.Fuzz(func(t *testing.T, uri string) {
		rel, err := r.relPath(uri)
		if err != nil {
			return
		}
		slash := filepath.ToSlash(rel)
		if filepath.IsAbs(rel) || slash == ".." || strings.HasPrefix(slash, "../") || strings.Contains(slash, "/../") ||
			filepath.Clean(rel) != rel || rel == "." {
			t.Fatalf("%q gave %q", uri, rel)
		}
	})
}
