package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/sandbox/overlay"
)

// diffMax is the largest file whose content a change's diff reads: a
// change with a file larger than it, before or after, is too large to
// show, as a diff of texts past view.DiffLines's 2,000 lines is
// summarised. It bounds the memory a diff takes, whatever the round
// changed (a call may stage up to its staging limit).
const diffMax = 1 << 20

// ErrTooLarge: a file of a change is larger than 1 MiB, too large for
// its diff to be shown (FileChange.Texts).
var ErrTooLarge = errors.New("too large to show")

// content reads at most n bytes of one side of a change.
type content func(n int64) ([]byte, error)

// Texts reads what the change's path held before it and after it, for a
// diff: nil where there was no file.
//
// # Errors
//
// ErrTooLarge, reading neither, when either file is larger than diffMax;
// the error of reading the kept change or the store's blob, which a gc
// or an undo may have removed since Changes listed it.
func (fc FileChange) Texts() (before, after []byte, err error) {
	if fc.BeforeSize > diffMax || fc.AfterSize > diffMax {
		return nil, nil, fmt.Errorf("%s: %d → %d bytes: %w", fc.Path, fc.BeforeSize, fc.AfterSize, ErrTooLarge)
	}
	if before, err = fc.before.read(); err == nil {
		after, err = fc.after.read()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", fc.Path, err)
	}
	if len(before) > diffMax || len(after) > diffMax {
		return nil, nil, fmt.Errorf("%s: %w", fc.Path, ErrTooLarge)
	}
	return before, after, nil
}

// read is the side's content, at most one byte past diffMax of it.
func (c content) read() ([]byte, error) {
	if c == nil {
		return nil, nil
	}
	return c(diffMax + 1)
}

// fileContent is the content of the file at path.
func fileContent(path string) content {
	return func(n int64) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, n))
	}
}

// spanContent is the content the record file at path holds at s.
func spanContent(path string, s span) content {
	return func(n int64) ([]byte, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		b := make([]byte, min(n, s.n))
		_, err = f.ReadAt(b, s.off)
		return b, err
	}
}

// blobContent is the store's blob of digest, a file of where.
func blobContent(s checkpoint.Store, where, digest string) content {
	return func(int64) ([]byte, error) {
		b, err := s.Blob(digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		return b, nil
	}
}

// span is where a file's content lies in a kept record: its offset and
// length.
type span struct{ off, n int64 }

// keptIndex is a call's kept changes as a diff and an undo read them:
// the manifest, and where the files before and after lie, read without
// their content.
type keptIndex struct {
	manifest      []byte
	before, after map[string]content
	// restore streams each file before, for undo to put it back.
	restore map[string]opener
}

// opener opens a file's content to stream it.
type opener func() (io.ReadCloser, error)

// spanOpener opens the content the record file at path holds at s.
func spanOpener(path string, s span) opener {
	return func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.NewSectionReader(f, s.off, s.n), f}, nil
	}
}

// fileOpener opens the file at path.
func fileOpener(path string) opener {
	return func() (io.ReadCloser, error) { return os.Open(path) }
}

// indexKeptChanges reads a call's kept changes, a record file or the
// directory an earlier version kept, without the files' content.
func indexKeptChanges(path string) (keptIndex, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return indexKeptDir(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return keptIndex{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return keptIndex{}, err
	}
	rec, err := indexKeptRecord(f, fi.Size())
	if err != nil {
		return keptIndex{}, err
	}
	idx := keptIndex{manifest: rec.manifest, before: map[string]content{}, after: map[string]content{}, restore: map[string]opener{}}
	for p, s := range rec.before {
		idx.before[p], idx.restore[p] = spanContent(path, s), spanOpener(path, s)
	}
	for p, s := range rec.after {
		idx.after[p] = spanContent(path, s)
	}
	return idx, nil
}

func indexKeptDir(dir string) (keptIndex, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.cbor"))
	idx := keptIndex{manifest: b, before: map[string]content{}, after: map[string]content{}, restore: map[string]opener{}}
	if err != nil {
		return idx, err
	}
	effects, err := overlay.DecodeEffects(b)
	if err != nil {
		return idx, err
	}
	for _, e := range effects {
		for side, files := range map[string]map[string]content{"before": idx.before, "after": idx.after} {
			p := filepath.Join(dir, side, filepath.FromSlash(e.Path))
			if _, err := os.Stat(p); err == nil {
				files[e.Path] = fileContent(p)
				if side == "before" {
					idx.restore[e.Path] = fileOpener(p)
				}
			}
		}
	}
	return idx, nil
}

// keptSpans are a kept record's manifest and where its files lie in it.
type keptSpans struct {
	manifest      []byte
	before, after map[string]span
}

// indexKeptRecord reads the keptRecord of r, size bytes, which
// encodeKeptRecord wrote (or, before it, the CBOR encoder of keptRecord):
// a map of its fields, 1 the manifest, 2 and 3 the files before and after
// keyed by path, every length definite. Only the heads and the paths are
// read, never a file's content. A record it does not read wholly so is
// refused.
func indexKeptRecord(r io.ReaderAt, size int64) (keptSpans, error) {
	var idx keptSpans
	c := cborAt{r: r, size: size}
	fields, err := c.head(5)
	if err != nil {
		return idx, err
	}
	seen := map[uint64]bool{}
	for range fields {
		key, err := c.head(0)
		if err != nil {
			return idx, err
		}
		if seen[key] {
			return idx, fmt.Errorf("kept record: field %d twice", key)
		}
		seen[key] = true
		switch key {
		case 1:
			idx.manifest, err = c.bytes(2)
		case 2:
			idx.before, err = c.files()
		case 3:
			idx.after, err = c.files()
		default:
			err = fmt.Errorf("kept record: unknown field %d", key)
		}
		if err != nil {
			return idx, err
		}
	}
	if c.off != size {
		return idx, fmt.Errorf("kept record: %d bytes past its end", size-c.off)
	}
	return idx, nil
}

// cborAt reads CBOR heads and strings at off in r, which holds size
// bytes.
type cborAt struct {
	r         io.ReaderAt
	off, size int64
}

// head reads the head of a data item of major type major and returns its
// argument, which must be definite.
func (c *cborAt) head(major byte) (uint64, error) {
	var b [9]byte
	if c.off >= c.size {
		return 0, fmt.Errorf("kept record: %w", io.ErrUnexpectedEOF)
	}
	if _, err := c.r.ReadAt(b[:1], c.off); err != nil {
		return 0, err
	}
	if b[0]>>5 != major {
		return 0, fmt.Errorf("kept record: at byte %d: major type %d, want %d", c.off, b[0]>>5, major)
	}
	info, extra := b[0]&31, int64(0)
	switch {
	case info < 24:
		c.off++
		return uint64(info), nil
	case info <= 27:
		extra = 1 << (info - 24)
	default:
		return 0, fmt.Errorf("kept record: at byte %d: not a definite length (%#x)", c.off, b[0])
	}
	if c.size-c.off-1 < extra {
		return 0, fmt.Errorf("kept record: %w", io.ErrUnexpectedEOF)
	}
	if _, err := c.r.ReadAt(b[1:1+extra], c.off+1); err != nil {
		return 0, err
	}
	c.off += 1 + extra
	var pad [8]byte
	copy(pad[8-extra:], b[1:1+extra])
	return binary.BigEndian.Uint64(pad[:]), nil
}

// skip passes over a string of major type major and returns where its
// bytes lie.
func (c *cborAt) skip(major byte) (span, error) {
	n, err := c.head(major)
	if err != nil {
		return span{}, err
	}
	if n > uint64(c.size-c.off) {
		return span{}, fmt.Errorf("kept record: %w", io.ErrUnexpectedEOF)
	}
	s := span{c.off, int64(n)}
	c.off += s.n
	return s, nil
}

// bytes reads a string of major type major.
func (c *cborAt) bytes(major byte) ([]byte, error) {
	s, err := c.skip(major)
	if err != nil {
		return nil, err
	}
	b := make([]byte, s.n)
	_, err = c.r.ReadAt(b, s.off)
	return b, err
}

// files reads a map of paths to files' contents: where each lies.
func (c *cborAt) files() (map[string]span, error) {
	pairs, err := c.head(5)
	if err != nil {
		return nil, err
	}
	out := map[string]span{}
	for range pairs {
		p, err := c.bytes(3)
		if err != nil {
			return nil, err
		}
		s, err := c.skip(2)
		if err != nil {
			return nil, err
		}
		if _, ok := out[string(p)]; ok {
			return nil, fmt.Errorf("kept record: path %q twice", p)
		}
		out[string(p)] = s
	}
	return out, nil
}
