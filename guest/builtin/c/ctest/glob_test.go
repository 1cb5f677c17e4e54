package ctest

import (
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// compareGlob fails t when C and doublestar disagree on pattern and path:
// glob_valid against ValidatePattern, glob_match against Match's true.
func compareGlob(t *testing.T, h *harness, pattern, path string) {
	t.Helper()
	wantValid := doublestar.ValidatePattern(pattern)
	wantMatch, _ := doublestar.Match(pattern, path)
	valid, match := h.glob(t, pattern, path)
	if valid != wantValid {
		t.Fatalf("pattern %q: C valid %v, doublestar %v", pattern, valid, wantValid)
	}
	if match != wantMatch {
		t.Fatalf("pattern %q path %q: C match %v, doublestar %v", pattern, path, match, wantMatch)
	}
}

var globPaths = []string{
	"", "a", "b", "ab", "abc", "a.go", "main.go", "x/main.go", "x/y/main.go", "x/y/z/main_test.go",
	"README.md", "docs/a.md", "docs/sub/b.md", "a/b", "a/b/c", "a/b/c/d", "a/", "/a", "a//b",
	".hidden", "x/.hidden", "a-b", "a]b", "a[b", "a{b", "a,b", "a*b", "a?b", "a\\b", "日本.go",
	"x/日本/y", "\xff", "a\xffb", "foo/bar/baz.txt", "foo/baz.txt", "foo/bar/qux/baz.txt", "-", "!",
}

var globPatterns = []string{
	"", "a", "*", "**", "*.go", "**/*.go", "x/*.go", "x/**/*.go", "**/main.go", "a/**", "a/**/",
	"**/", "/**", "a/**/d", "a/*/c", "a/*", "?", "??", "a?", "?.go", "[ab]", "[!ab]", "[^ab]",
	"[a-c]", "[a-c]*", "[]]", "[]a]", "[", "[a", "[!", "[!]", "[\\]]", "a\\*b", "a\\?b", "a\\", "\\",
	"{a,b}", "{a,b}.go", "{*.go,*.md}", "**/{a,b}.md", "{a,{b,c}}", "{a,b", "a,b}", "}", "{}",
	"{,a}", "{a,}", "x/{y,z}/**", "{**/,}*.go", "a/{b,c/d}", "[a-]", "[-a]", "[a\\-z]", "*/",
	"*/*", "*/*/*", "**/**", "**/**/*.go", "docs/**/*.md", "foo/**/baz.txt", "foo/*/baz.txt",
	"日本.go", "*本*", "x/?本/y", "[日]本.go", "\xff", "?", "a\xffb", "a?b", "[\xff]", "a/**b",
	"**a", "a**", "a/**/**/d", "{a/**,b}", "[[]", "[a-]]", "*[", "{[}]", "{\\},a}", "[\\",
}

func TestGlobAgainstDoublestar(t *testing.T) {
	h := newHarness(t)
	for _, p := range globPatterns {
		for _, path := range globPaths {
			compareGlob(t, h, p, path)
		}
	}
}

// FuzzGlobAgainstDoublestar checks that C and doublestar agree on whether a
// pattern is valid and whether it matches a path.
func FuzzGlobAgainstDoublestar(f *testing.F) {
	for i, p := range globPatterns {
		f.Add(p, globPaths[i%len(globPaths)])
	}
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 200 || len(path) > 1000 {
			return
		}
		compareGlob(t, h, pattern, path)
	})
}
