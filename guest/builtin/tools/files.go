package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/cairnrun/cairn/guest"
)

type readIn struct {
	Path   string `json:"path" desc:"file path, relative to the workspace"`
	Offset int    `json:"offset,omitempty" desc:"first line to read, counted from 1"`
	Limit  int    `json:"limit,omitempty" desc:"how many lines to read (at most 2000)"`
}

func readFile(c *guest.Call, in readIn) (string, error) {
	p, rel, err := resolve(c, in.Path)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", describe(rel, err)
	}
	if isBinary(b) {
		return "", fmt.Errorf("%s is a binary file (%d bytes); read_file reads text only", rel, len(b))
	}
	first := max(in.Offset, 1)
	limit := in.Limit
	if limit <= 0 || limit > maxLines {
		limit = maxLines
	}
	// One pass: lines are cut as they are skipped and shown, and only the
	// lines past the last one shown are counted on their own.
	rest, skipped := skipLines(b, first-1)
	if len(rest) == 0 && skipped > 0 {
		return "", fmt.Errorf("%s has %d lines; offset %d is past the end", rel, skipped, first)
	}
	// Sized once, with room for the line numbers of lines of 16 bytes: a
	// buffer that grows line by line copies the text over and over,
	// which a call in a sandbox pays for dearly.
	shown := min(len(rest), maxBytes)
	out := make([]byte, 0, shown+shown/2+128)
	last := first - 1
	for len(rest) > 0 && last < first-1+limit && len(out) < maxBytes {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		last++
		out = appendNumbered(out, last, line)
	}
	if len(rest) > 0 {
		out = fmt.Appendf(out, "(%s has %d lines; shown %d to %d; read on with offset %d)\n", rel, last+countLines(rest), first, last, last+1)
	}
	// out is not used again: the string shares its bytes, as a
	// strings.Builder's would.
	return unsafe.String(unsafe.SliceData(out), len(out)), nil
}

var newline = []byte{'\n'}

// skipLines cuts up to n lines off the start of b, and returns the rest
// and how many lines it cut.
func skipLines(b []byte, n int) ([]byte, int) {
	skipped := 0
	for ; skipped < n && len(b) > 0; skipped++ {
		_, b, _ = bytes.Cut(b, newline)
	}
	return b, skipped
}

// countLines counts the lines of b, the last one whether or not a
// newline ends it.
func countLines(b []byte) int {
	n := bytes.Count(b, newline)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// appendNumbered appends a line as "%6d\t%s\n" would, without fmt and
// without allocating, which a call in a sandbox pays for dearly at every
// line.
func appendNumbered(out []byte, n int, line []byte) []byte {
	var digits [20]byte
	i := len(digits)
	for {
		i--
		digits[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	for pad := 6 - (len(digits) - i); pad > 0; pad-- {
		out = append(out, ' ')
	}
	out = append(out, digits[i:]...)
	out = append(out, '\t')
	out = append(out, line...)
	return append(out, '\n')
}

type writeIn struct {
	Path    string `json:"path" desc:"file path, relative to the workspace"`
	Content string `json:"content" desc:"the whole new content of the file"`
}

func writeFile(c *guest.Call, in writeIn) (string, error) {
	p, rel, err := resolve(c, in.Path)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", errors.New("path names the workspace itself; give a file path")
	}
	if err := os.MkdirAll(path.Dir(p), 0o755); err != nil {
		return "", describe(path.Dir(rel), err)
	}
	if err := os.WriteFile(p, []byte(in.Content), 0o644); err != nil {
		return "", describe(rel, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(in.Content), rel), nil
}

type editIn struct {
	Path       string `json:"path" desc:"file path, relative to the workspace"`
	OldText    string `json:"old_text" desc:"the exact text to replace"`
	NewText    string `json:"new_text" desc:"the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" desc:"replace every occurrence instead of exactly one"`
}

func editFile(c *guest.Call, in editIn) (string, error) {
	p, rel, err := resolve(c, in.Path)
	if err != nil {
		return "", err
	}
	if in.OldText == "" {
		return "", errors.New("old_text is empty; to write a whole file use write_file")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", describe(rel, err)
	}
	n := strings.Count(string(b), in.OldText)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_text not found in %s; read the file and copy the text exactly", rel)
	case n > 1 && !in.ReplaceAll:
		return "", fmt.Errorf("old_text occurs %d times in %s; give more context so it occurs once, or set replace_all", n, rel)
	}
	out := strings.Replace(string(b), in.OldText, in.NewText, -1)
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		return "", describe(rel, err)
	}
	return fmt.Sprintf("replaced %d occurrence(s) in %s", n, rel), nil
}

type listIn struct {
	Path string `json:"path,omitempty" desc:"directory path, relative to the workspace (default: the workspace)"`
}

func listDir(c *guest.Call, in listIn) (string, error) {
	p, rel, err := resolve(c, in.Path)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return "", describe(rel, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	if len(entries) == 0 {
		return rel + " is empty\n", nil
	}
	var out strings.Builder
	for _, e := range entries {
		if e.IsDir() {
			out.WriteString(e.Name() + "/\n")
			continue
		}
		size := int64(-1)
		if fi, err := e.Info(); err == nil {
			size = fi.Size()
		}
		out.WriteString(e.Name() + "\t" + strconv.FormatInt(size, 10) + " bytes\n")
	}
	return out.String(), nil
}

// describe words a filesystem error for the model.
func describe(rel string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", rel)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s: permission denied (the workspace may be read-only for this tool)", rel)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", rel, pe.Err)
	}
	return fmt.Errorf("%s: %v", rel, err)
}

// isBinary guesses as git does: a NUL in the first 8000 bytes, or text that
// is not UTF-8.
func isBinary(b []byte) bool {
	head := b[:min(len(b), 8000)]
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head[:validPrefix(head)])
}

// validPrefix cuts a possibly split final rune off a prefix.
func validPrefix(b []byte) int {
	for i := 0; i < utf8.UTFMax && i < len(b); i++ {
		if utf8.RuneStart(b[len(b)-1-i]) {
			if !utf8.FullRune(b[len(b)-1-i:]) {
				return len(b) - 1 - i
			}
			break
		}
	}
	return len(b)
}
