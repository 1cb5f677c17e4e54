package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// mdLink is a Markdown link's target: the text in ](...).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve follows every relative link of the project's
// Markdown pages (README.md, RATIONALE.md, BENCHMARKS.md and docs/) and
// fails on one whose file does not exist: README once linked a page that
// was never written.
func TestDocLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../../README.md", "../../RATIONALE.md", "../../BENCHMARKS.md")
	links := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", filepath.Base(page), m[1])
			}
		}
	}
	if links < 20 {
		t.Fatalf("found %d relative links; the pattern no longer reads the pages", links)
	}
}
