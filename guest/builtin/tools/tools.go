// Package tools defines cairn's built-in tools: read_file, write_file,
// edit_file, list_dir, glob and grep. They are ordinary guest tools. The
// module the host embeds and runs in the sandbox like any other (the host
// has no privileged shortcut) is their C implementation in ../c, which
// must do exactly what these do; these are the reference it is tested
// against (built as ../cmd/builtin), and the source of its manifest.
//
// Paths are relative to the workspace. An absolute path or one that climbs
// out with ".." is refused with an error the model can act on, before the
// sandbox would refuse it anyway. Results are plain text, deterministic
// (listings are sorted) and capped.
package tools

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/cairnrun/cairn/abi"
	"github.com/cairnrun/cairn/guest"
)

// Caps on what one call returns.
const (
	maxLines   = 2000
	maxBytes   = 256 << 10
	maxMatches = 500
)

// All returns the built-in tools.
func All() []guest.Tool {
	ro := guest.Needs(abi.Needs{Workspace: abi.AccessReadOnly})
	rw := guest.Needs(abi.Needs{Workspace: abi.AccessReadWrite})
	return []guest.Tool{
		guest.Define("read_file", "Reads a text file of the workspace and returns its lines, numbered. Use offset and limit to read a long file in parts.", readFile, ro, guest.Idempotent()),
		guest.Define("write_file", "Writes a file of the workspace, replacing it if it exists and making its directories.", writeFile, rw, guest.Mutates(), guest.Idempotent()),
		guest.Define("edit_file", "Replaces exact text in a file of the workspace. old_text must occur exactly once unless replace_all is set.", editFile, rw, guest.Mutates()),
		guest.Define("list_dir", "Lists a directory of the workspace: directories end with a slash, files show their size.", listDir, ro, guest.Idempotent()),
		guest.Define("glob", "Finds files of the workspace whose paths match a pattern; ** matches any number of directories.", globFiles, ro, guest.Idempotent()),
		guest.Define("grep", "Searches the text files of the workspace for lines matching a regular expression (RE2 syntax).", grep, ro, guest.Idempotent()),
	}
}

// errOutside is returned for a path that leaves the workspace.
var errOutside = errors.New("paths are relative to the workspace and cannot leave it")

// resolve checks a model-given path and returns it inside the workspace,
// and its clean relative form for messages.
func resolve(c *guest.Call, p string) (string, string, error) {
	if p == "" {
		p = "."
	}
	if strings.HasPrefix(p, "/") {
		return "", "", fmt.Errorf("%q is absolute: %w", p, errOutside)
	}
	rel := path.Clean(p)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", fmt.Errorf("%q: %w", p, errOutside)
	}
	return path.Join(c.Workspace, rel), rel, nil
}
