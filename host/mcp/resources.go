package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxResourceSize bounds the file a resources/read returns.
const MaxResourceSize = 8 << 20

// ErrNotInWorkspace: a resource URI names no file of the workspace.
var ErrNotInWorkspace = errors.New("not a file of the workspace")

// resources offers the workspace's regular files, read-only, as
// file:// resources: the first max of them listed (and the list kept up
// to date after each call), any of them readable through a template.
// Reads go through an os.Root, so a symlink cannot lead out of the
// workspace.
type resources struct {
	srv    *sdk.Server
	dir    string
	prefix string // the URI of the workspace directory, with a slash
	max    int

	mu     sync.Mutex
	listed map[string]bool // URIs listed now
}

func newResources(srv *sdk.Server, dir string, max int) (*resources, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs) + "/"}
	r := &resources{srv: srv, dir: abs, prefix: u.String(), max: max, listed: map[string]bool{}}
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "workspace", Title: "a file of the workspace",
		Description: "Any file of the agent's workspace, read-only.", URITemplate: r.prefix + "{+path}"}, r.read)
	r.sync(context.Background())
	return r, nil
}

// sync lists the workspace's files as they are now.
func (r *resources) sync(context.Context) {
	files := r.walk()
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []string
	for uri := range r.listed {
		if _, ok := files[uri]; !ok {
			gone = append(gone, uri)
			delete(r.listed, uri)
		}
	}
	if len(gone) > 0 {
		r.srv.RemoveResources(gone...)
	}
	for uri, rel := range files {
		if r.listed[uri] {
			continue
		}
		r.listed[uri] = true
		r.srv.AddResource(&sdk.Resource{URI: uri, Name: rel, MIMEType: mimeType(rel)}, r.read)
	}
}

// walk finds up to max regular files of the workspace, by URI: first
// those outside hidden directories that are not hidden themselves (a
// name that begins with a dot), then the others, so that a .git
// directory, whose name sorts first, does not take the place of the
// workspace's own files.
func (r *resources) walk() map[string]string {
	files := map[string]string{}
	for _, hidden := range []bool{false, true} {
		filepath.WalkDir(r.dir, func(p string, d fs.DirEntry, err error) error {
			if len(files) >= r.max {
				return fs.SkipAll
			}
			if err != nil {
				return fs.SkipDir
			}
			if !hidden && p != r.dir && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(r.dir, p)
				files[r.uri(rel)] = filepath.ToSlash(rel)
			}
			return nil
		})
	}
	return files
}

func (r *resources) uri(rel string) string {
	return r.prefix + (&url.URL{Path: filepath.ToSlash(rel)}).EscapedPath()
}

// read reads one file of the workspace.
func (r *resources) read(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	rel, err := r.relPath(uri)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", err)
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, sdk.ResourceNotFoundError(uri)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (it is not a regular file)", uri, ErrNotInWorkspace)
	}
	if fi.Size() > MaxResourceSize {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d a resource may be; read it with a tool", uri, fi.Size(), MaxResourceSize)
	}
	b, err := root.ReadFile(rel)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	c := &sdk.ResourceContents{URI: uri, MIMEType: mimeType(rel)}
	if utf8.Valid(b) && escapedSize(b) <= maxResult {
		c.Text = string(b)
	} else {
		// Not text, or text that JSON escapes past what an answer
		// carries (quotes twice their size, controls six times): as
		// base64, a file within MaxResourceSize is within it.
		c.Blob = b
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
}

// relPath is the workspace path a file:// URI names.
func (r *resources) relPath(uri string) (string, error) {
	if !strings.HasPrefix(uri, r.prefix) {
		return "", fmt.Errorf("%s: %w (its files' URIs begin %s)", uri, ErrNotInWorkspace, r.prefix)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("%s: %w", uri, err)
	}
	base, _ := url.Parse(r.prefix)
	rel := strings.TrimPrefix(u.Path, base.Path)
	if rel == "" || rel == "." || !fs.ValidPath(rel) || path.Clean(rel) != rel {
		return "", fmt.Errorf("%s: %w", uri, ErrNotInWorkspace)
	}
	return filepath.FromSlash(rel), nil
}

func mimeType(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "text/plain"
}

// escapedSize is how many bytes, at most, b, valid UTF-8, takes as a
// JSON string that encoding/json writes (it escapes <, > and &, and
// U+2028 and U+2029, too).
func escapedSize(b []byte) int {
	n := 2
	for _, r := range string(b) {
		switch {
		case r == '"' || r == '\\':
			n += 2
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}
