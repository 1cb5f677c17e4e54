package filepool

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// ErrBadPath is matched by the error of CleanPath and of every method that
// takes a path CleanPath refuses.
var ErrBadPath = errors.New("not a path inside the workspace")

// CleanPath returns p as the pool keeps it: relative to the workspace,
// slash-separated and clean ("./a//b/../c" is "a/c").
//
// # Errors
//
// It refuses, with an error matching ErrBadPath, an empty path, a path with
// a NUL byte or a backslash, an absolute path, a path that leads out of the
// workspace ("../x", "a/../../x") and the workspace itself (".").
func CleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%w: empty path", ErrBadPath)
	case strings.ContainsAny(p, "\x00\\"):
		return "", fmt.Errorf("%w: %q has a NUL byte or a backslash", ErrBadPath, p)
	case path.IsAbs(p):
		return "", fmt.Errorf("%w: %q is absolute", ErrBadPath, p)
	}
	c := path.Clean(p)
	if c == "." {
		return "", fmt.Errorf("%w: %q is the workspace itself", ErrBadPath, p)
	}
	if !filepath.IsLocal(filepath.FromSlash(c)) {
		return "", fmt.Errorf("%w: %q leads outside the workspace", ErrBadPath, p)
	}
	return c, nil
}
