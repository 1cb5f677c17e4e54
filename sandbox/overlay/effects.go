package overlay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/fxamacker/cbor/v2"

	"github.com/cairnrun/cairn/internal/strictcbor"
)

// Op is what an Effect does to its path.
type Op string

// The operations of an effect.
const (
	OpWrite  Op = "write"  // the path becomes a regular file with New's content
	OpDelete Op = "delete" // the file at the path is removed
	OpMkdir  Op = "mkdir"  // the path becomes a directory
	OpRmdir  Op = "rmdir"  // the directory at the path is removed
)

// Version is what a workspace holds at a path: nothing, a directory, or a
// regular file with its content's sha256 and size.
type Version struct {
	Exists bool     `cbor:"1,keyasint,omitempty"`
	Dir    bool     `cbor:"2,keyasint,omitempty"`
	Hash   [32]byte `cbor:"3,keyasint,omitempty"`
	Size   int64    `cbor:"4,keyasint,omitempty"`
}

// IsFile reports whether v is a regular file.
func (v Version) IsFile() bool { return v.Exists && !v.Dir }

func (v Version) String() string {
	switch {
	case !v.Exists:
		return "absent"
	case v.Dir:
		return "directory"
	}
	return fmt.Sprintf("file sha256:%s (%d bytes)", hex.EncodeToString(v.Hash[:]), v.Size)
}

func fileVersion(sum []byte, size int64) Version {
	v := Version{Exists: true, Size: size}
	copy(v.Hash[:], sum)
	return v
}

var dirVersion = Version{Exists: true, Dir: true}

// Effect is one change a call made to one path of its workspace. Base is
// what the workspace held there when the call first changed the path; New
// is what the call left there. Mode is the permission New gets (zero when
// New is absent).
type Effect struct {
	Path string      `cbor:"1,keyasint"` // slash-separated, relative to the workspace
	Op   Op          `cbor:"2,keyasint"`
	Base Version     `cbor:"3,keyasint"`
	New  Version     `cbor:"4,keyasint"`
	Mode fs.FileMode `cbor:"5,keyasint,omitempty"`
}

// Effects is a call's effect manifest: one Effect per changed path,
// sorted by Path. The same call always gives the same bytes when encoded
// with Marshal.
type Effects []Effect

// errBadManifest is returned for an effect manifest that does not hold
// together: a path that is not clean and relative, out of order or twice,
// an operation that does not match its versions, or a file inside a path
// that is not a directory.
var errBadManifest = errors.New("invalid effect manifest")

// reservedPrefix starts the names of Apply's temporary files. A guest
// cannot make a file so named, and a manifest cannot name one.
const reservedPrefix = ".cairn-apply-"

// IsApplyTemp reports whether name is named like one of Apply's temporary
// files: what a copy of a workspace leaves out, since it is there only
// while a call's changes are applied.
func IsApplyTemp(name string) bool { return strings.HasPrefix(name, reservedPrefix) }

// Validate checks that the manifest holds together: clean relative paths
// in order, each once, none reserved or inside a path that stops being a
// directory, and operations that fit their versions.
func (es Effects) Validate() error {
	for i, e := range es {
		if err := e.validate(); err != nil {
			return fmt.Errorf("%w: %s: %v", errBadManifest, e.Path, err)
		}
		if i > 0 && es[i-1].Path >= e.Path {
			return fmt.Errorf("%w: %s: out of order or repeated", errBadManifest, e.Path)
		}
	}
	byPath := es.byPath()
	for _, e := range es {
		if !e.New.Exists {
			continue
		}
		for _, a := range ancestors(e.Path) {
			if d, ok := byPath[a]; ok && !d.New.Dir {
				return fmt.Errorf("%w: %s: inside %s, which becomes %s", errBadManifest, e.Path, a, d.New)
			}
		}
	}
	return nil
}

func (e Effect) validate() error {
	if !validPath(e.Path) {
		return errors.New("not a clean relative path")
	}
	for _, v := range []Version{e.Base, e.New} {
		if (!v.IsFile() && (v.Hash != [32]byte{} || v.Size != 0)) || v.Size < 0 || (v.Dir && !v.Exists) {
			return fmt.Errorf("malformed version %+v", v)
		}
	}
	if e.Mode&^fs.ModePerm != 0 {
		return fmt.Errorf("mode %v is more than permission bits", e.Mode)
	}
	var ok bool
	switch e.Op {
	case OpWrite:
		ok = e.New.IsFile()
	case OpMkdir:
		ok = e.New.Dir
	case OpDelete:
		ok = e.Base.IsFile() && !e.New.Exists
	case OpRmdir:
		ok = e.Base.Dir && !e.New.Exists
	}
	if !ok || e.Base == e.New {
		return fmt.Errorf("%s from %s to %s", e.Op, e.Base, e.New)
	}
	return nil
}

// validPath reports whether p names something inside a workspace: clean,
// relative, not the workspace itself, not a temporary file of Apply.
func validPath(p string) bool {
	return p != "" && p != "." && path.Clean(p) == p && !path.IsAbs(p) && p != ".." &&
		!strings.HasPrefix(p, "../") && !strings.ContainsRune(p, 0) &&
		!isReserved(p)
}

func (es Effects) byPath() map[string]Effect {
	m := make(map[string]Effect, len(es))
	for _, e := range es {
		m[e.Path] = e
	}
	return m
}

// removes reports whether applying e first removes what is at its path:
// a deletion, or a file replaced by a directory or the other way round.
func (e Effect) removes() bool { return e.Base.Exists && (!e.New.Exists || e.Base.Dir != e.New.Dir) }

// The manifest codec: deterministic encoding, and a decoder hardened like
// abi's, since a manifest is read back from disk on resume.
var (
	effectsEnc = strictcbor.Must(cbor.CoreDetEncOptions().EncMode())
	effectsDec = strictcbor.StoredDecMode(strictcbor.Limits{Depth: 8, Elements: 1 << 20, Pairs: 16})
)

// Marshal encodes the manifest as deterministic CBOR.
func (es Effects) Marshal() ([]byte, error) { return effectsEnc.Marshal(es) }

// DecodeEffects decodes a manifest written by Marshal and validates it.
//
// # Errors
//
// A CBOR error for bytes that are not a manifest, an "invalid effect
// manifest" error for one that does not hold together (see Validate).
func DecodeEffects(b []byte) (Effects, error) {
	var es Effects
	if err := effectsDec.Unmarshal(b, &es); err != nil {
		return nil, fmt.Errorf("decode effects: %w", err)
	}
	if err := es.Validate(); err != nil {
		return nil, fmt.Errorf("decode effects: %w", err)
	}
	return es, nil
}

// Effects is the call's effect manifest: every path whose content or kind
// the call changed, with what the workspace held there when the call first
// changed it. A file written back with the content it had, a file made and
// removed again, and a directory removed and made again are no effect.
// Call it after the call has ended.
//
// # Errors
//
// Reading a staged file failed.
func (o *Overlay) Effects() (Effects, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var es Effects
	for p, n := range o.nodes {
		e := Effect{Path: p, Base: n.base}
		switch n.kind {
		case nodeGone:
			e.Op = OpDelete
			if n.base.Dir {
				e.Op = OpRmdir
			}
		case nodeDir:
			e.Op, e.New, e.Mode = OpMkdir, dirVersion, n.mode
		case nodeFile:
			v, err := hashAt(o.st, blobName(p))
			if err != nil {
				return nil, fmt.Errorf("effects: staged %s: %w", p, err)
			}
			e.Op, e.New, e.Mode = OpWrite, v, n.mode
		}
		if e.Base != e.New {
			es = append(es, e)
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
	return es, nil
}

// Unchanged lists, sorted, the workspace paths the call changed and left
// as they were: a file written with the content it had, a directory
// removed and made again. They are no effects, but what the call did
// there turned on what the path held (writing a file that held other
// content is a change), so a recording of what the call saw names them.
func (o *Overlay) Unchanged() ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for p, n := range o.nodes {
		switch {
		case !n.base.Exists:
			continue
		case n.kind == nodeDir && n.base.Dir:
		case n.kind == nodeFile && n.base.IsFile() && n.blob.size == n.base.Size:
			v, err := hashAt(o.st, blobName(p))
			if err != nil {
				return nil, fmt.Errorf("staged %s: %w", p, err)
			}
			if v != n.base {
				continue
			}
		default:
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// blobName is the staging file that holds the content of a workspace path.
func blobName(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:])
}
