package checkpoint

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// WorkspaceEntry is what a workspace holds at one path: a directory, or a
// regular file whose content is the blob Digest. In a round's changes, an
// entry with Gone says the path was removed.
type WorkspaceEntry struct {
	Path   string `cbor:"1,keyasint"` // slash-separated, relative to the workspace
	Dir    bool   `cbor:"2,keyasint,omitempty"`
	Gone   bool   `cbor:"3,keyasint,omitempty"`
	Digest string `cbor:"4,keyasint,omitempty"`
	Mode   uint32 `cbor:"5,keyasint,omitempty"` // permission bits
	Size   int64  `cbor:"6,keyasint,omitempty"`
}

// A workspace manifest is one blob:
//
//	CBOR   a workspaceManifest: its version and its entries, sorted by path
//
// Entries name their files' content by blob digest, so a workspace kept at
// many boundaries stores each distinct file once.
type workspaceManifest struct {
	Version int              `cbor:"1,keyasint"`
	Entries []WorkspaceEntry `cbor:"2,keyasint"`
}

// manifestVersion is the version of the manifest this build writes.
const manifestVersion = 1

// EncodeManifest encodes entries, sorted by path, as a manifest blob.
func EncodeManifest(entries []WorkspaceEntry) ([]byte, error) {
	sorted := append([]WorkspaceEntry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	return encMode.Marshal(workspaceManifest{Version: manifestVersion, Entries: sorted})
}

// decodeManifest decodes a manifest blob and checks it: its version, and
// that every path is clean, relative, named once, in order, and not below
// a file.
//
// # Errors
//
// A *FutureSchemaError for a newer manifest; a *CorruptError for anything
// else wrong with the bytes.
func decodeManifest(data []byte) ([]WorkspaceEntry, error) {
	var m workspaceManifest
	if err := decMode.Unmarshal(data, &m); err != nil {
		return nil, &CorruptError{File: "workspace manifest", Reason: err.Error()}
	}
	if m.Version > manifestVersion {
		return nil, &FutureSchemaError{File: "workspace manifest", Version: m.Version, Supported: manifestVersion}
	}
	if err := checkEntries(m.Entries); err != nil {
		return nil, &CorruptError{File: "workspace manifest", Reason: err.Error()}
	}
	return m.Entries, nil
}

func checkEntries(entries []WorkspaceEntry) error {
	files := map[string]bool{}
	for i, e := range entries {
		if err := checkWorkspacePath(e.Path); err != nil {
			return err
		}
		if i > 0 && entries[i-1].Path >= e.Path {
			return fmt.Errorf("path %q out of order or twice", e.Path)
		}
		if e.Gone || e.Dir == (e.Digest != "") {
			return fmt.Errorf("path %q: want a directory or a file with content", e.Path)
		}
		for d := path.Dir(e.Path); d != "."; d = path.Dir(d) {
			if files[d] {
				return fmt.Errorf("path %q is below the file %q", e.Path, d)
			}
		}
		files[e.Path] = !e.Dir
	}
	return nil
}

// checkWorkspacePath refuses a path that is not clean, relative and inside
// the workspace.
func checkWorkspacePath(p string) error {
	if p == "" || p == "." || path.Clean(p) != p || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") ||
		strings.ContainsRune(p, 0) || strings.Contains(p, "\\") {
		return fmt.Errorf("workspace path %q is not clean and relative", p)
	}
	return nil
}

// ApplyChanges is the manifest m with changes applied in order: a Gone
// entry removes its path (and, for a directory, what is below it), any
// other entry sets it. m is not changed.
func ApplyChanges(m []WorkspaceEntry, changes []WorkspaceEntry) []WorkspaceEntry {
	if len(changes) == 0 {
		return m
	}
	byPath := make(map[string]WorkspaceEntry, len(m))
	for _, e := range m {
		byPath[e.Path] = e
	}
	for _, c := range changes {
		if c.Gone {
			delete(byPath, c.Path)
			for p := range byPath {
				if strings.HasPrefix(p, c.Path+"/") {
					delete(byPath, p)
				}
			}
			continue
		}
		byPath[c.Path] = c
	}
	out := make([]WorkspaceEntry, 0, len(byPath))
	for _, e := range byPath {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
