package tools

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cairnrun/cairn/guest"
)

type globIn struct {
	Pattern string `json:"pattern" desc:"a pattern such as **/*.go or docs/*.md, relative to the workspace"`
}

func globFiles(c *guest.Call, in globIn) (string, error) {
	if !doublestar.ValidatePattern(in.Pattern) {
		return "", fmt.Errorf("pattern %q is not valid", in.Pattern)
	}
	if _, _, err := resolve(c, in.Pattern); err != nil {
		return "", err
	}
	matches, err := doublestar.Glob(os.DirFS(c.Workspace), in.Pattern, doublestar.WithFilesOnly())
	if err != nil {
		return "", fmt.Errorf("glob %s: %v", in.Pattern, err)
	}
	if len(matches) == 0 {
		return fmt.Sprintf("no files match %s\n", in.Pattern), nil
	}
	return capList(matches, maxMatches), nil
}

type grepIn struct {
	Pattern    string `json:"pattern" desc:"a regular expression (RE2 syntax)"`
	Path       string `json:"path,omitempty" desc:"a file or directory to search, relative to the workspace (default: the workspace)"`
	Glob       string `json:"glob,omitempty" desc:"search only files whose path matches this pattern, e.g. **/*.md"`
	IgnoreCase bool   `json:"ignore_case,omitempty" desc:"match without regard to case"`
}

func grep(c *guest.Call, in grepIn) (string, error) {
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("pattern %q: %v", in.Pattern, err)
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return "", fmt.Errorf("glob %q is not valid", in.Glob)
	}
	_, rel, err := resolve(c, in.Path)
	if err != nil {
		return "", err
	}
	var hits []string
	walkErr := fs.WalkDir(os.DirFS(c.Workspace), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return describe(p, err)
		}
		if d.IsDir() || (in.Glob != "" && !matchGlob(in.Glob, p)) {
			return nil
		}
		hits = append(hits, grepFile(path.Join(c.Workspace, p), p, re)...)
		if len(hits) > maxMatches {
			return fs.SkipAll
		}
		return nil
	})
	if walkErr != nil {
		return "", walkErr
	}
	if len(hits) == 0 {
		return fmt.Sprintf("no lines match %s\n", in.Pattern), nil
	}
	return capList(hits, maxMatches), nil
}

func matchGlob(pattern, p string) bool {
	ok, _ := doublestar.Match(pattern, p)
	return ok
}

// grepFile returns "path:line: text" for each matching line of a text file.
func grepFile(full, rel string, re *regexp.Regexp) []string {
	b, err := os.ReadFile(full)
	if err != nil || isBinary(b) {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if re.Match(sc.Bytes()) {
			out = append(out, rel+":"+strconv.Itoa(n)+": "+truncate(sc.Text(), 300))
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// capList joins lines, saying how many were left out past the cap.
func capList(lines []string, limit int) string {
	var out strings.Builder
	for i, l := range lines {
		if i == limit {
			fmt.Fprintf(&out, "(%d more not shown; narrow the search)\n", len(lines)-limit)
			break
		}
		out.WriteString(l)
		out.WriteByte('\n')
	}
	return out.String()
}
