package filepool

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/cairnrun/cairn/internal/ctxio"
)

// HashBytes is the Version of a file holding b.
func HashBytes(b []byte) Version {
	return Version{Exists: true, Hash: sha256.Sum256(b), Size: int64(len(b))}
}

// HashReader reads r to its end and returns the Version of a file holding
// what it read. It streams: memory use does not grow with the content.
func HashReader(r io.Reader) (Version, error) {
	return hashReader(context.Background(), r)
}

var buffers = sync.Pool{New: func() any { return new([64 << 10]byte) }}

func hashReader(ctx context.Context, r io.Reader) (Version, error) {
	h := sha256.New()
	buf := buffers.Get().(*[64 << 10]byte)
	defer buffers.Put(buf)
	n, err := io.CopyBuffer(h, ctxio.NewReader(ctx, r), buf[:])
	if err != nil {
		return Version{}, err
	}
	v := Version{Exists: true, Size: n}
	h.Sum(v.Hash[:0])
	return v, nil
}

// OpenRead opens name under root for reading as the pool does: without
// blocking, so that a FIFO planted where a file was cannot stall the
// caller.
func OpenRead(root *os.Root, name string) (*os.File, error) {
	return root.OpenFile(name, openFlags, 0)
}

// look reads what the workspace holds at name, through root, so no symlink
// leads it outside. A missing file is the zero Version. Something a tool
// could not read as a regular file (a directory, a FIFO, a symlink leading
// outside, a file without read permission) is described by unreadable. err
// is only ctx's error.
func look(ctx context.Context, root *os.Root, name string) (v Version, unreadable string, err error) {
	f, err := OpenRead(root, name)
	if err != nil {
		if absent(err) {
			return Version{}, "", nil
		}
		return Version{}, reason(err), nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Version{}, reason(err), nil
	}
	if !fi.Mode().IsRegular() {
		return Version{}, kindOf(fi.Mode()), nil
	}
	v, err = hashReader(ctx, f)
	if err != nil {
		if ctx.Err() != nil {
			return Version{}, "", ctx.Err()
		}
		return Version{}, reason(err), nil
	}
	return v, "", nil
}

// absent reports whether err says there is no file: the file or a
// directory on its way is missing, or what should be a directory is a file.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// reason is err without the path, which the caller already has.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// kindOf names what a non-regular file is.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
