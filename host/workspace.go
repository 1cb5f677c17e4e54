package host

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// maxWorkspaceArchive bounds the workspace a bookmark keeps: it is held in
// memory and stored as one blob.
const maxWorkspaceArchive = 256 << 20

// walkWorkspace calls fn with each regular file and directory under dir
// (not dir itself), in lexical order. It leaves out symlinks and special
// files, Apply's temporary files, and what is gone by the time the walk
// reaches it: a workspace that agents share changes as it is walked.
func walkWorkspace(dir string, fn func(p string, fi fs.FileInfo) error) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case p == dir:
			return err
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil || overlay.IsApplyTemp(d.Name()):
			return err
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
			return err
		}
		return fn(p, fi)
	})
}

// archiveWorkspace packs the regular files and directories of a workspace
// into a tar archive. Symlinks and special files are left out: tools never
// reach them outside the workspace, and a copy must not either.
func archiveWorkspace(dir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var total int64
	err := walkWorkspace(dir, func(p string, fi fs.FileInfo) error {
		if total += fi.Size(); total > maxWorkspaceArchive {
			return fmt.Errorf("%w to bookmark: more than %d MiB in %s", ErrWorkspaceTooLarge, maxWorkspaceArchive>>20, dir)
		}
		return addToArchive(tw, dir, p, fi)
	})
	if err != nil {
		return nil, fmt.Errorf("archive workspace: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func addToArchive(tw *tar.Writer, dir, p string, fi fs.FileInfo) error {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return err
	}
	hdr, err := tar.FileInfoHeader(fi, "")
	if err != nil {
		return err
	}
	hdr.Name, hdr.Uname, hdr.Gname, hdr.Uid, hdr.Gid = filepath.ToSlash(rel), "", "", 0, 0
	if err := tw.WriteHeader(hdr); err != nil || !fi.Mode().IsRegular() {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.CopyN(tw, f, fi.Size())
	return err
}

// ErrWorkspaceNotEmpty: a fork would unpack its workspace into a
// directory that exists and holds files. Nothing is written over them;
// the error names the directory.
var ErrWorkspaceNotEmpty = errors.New("exists and is not empty")

// extractWorkspace unpacks an archive of archiveWorkspace into dir, which
// must not exist yet (or be empty): else ErrWorkspaceNotEmpty. Every name
// is resolved inside dir.
func extractWorkspace(archive []byte, dir string) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("workspace %s %w; fork as another agent, or move the directory away", dir, ErrWorkspaceNotEmpty)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read workspace archive: %w", err)
		}
		if err := extractOne(root, hdr, tr); err != nil {
			return fmt.Errorf("extract %s: %w", hdr.Name, err)
		}
	}
}

func extractOne(root *os.Root, hdr *tar.Header, r io.Reader) error {
	name := filepath.FromSlash(hdr.Name)
	switch hdr.Typeflag {
	case tar.TypeDir:
		return root.MkdirAll(name, hdr.FileInfo().Mode().Perm()|0o700)
	case tar.TypeReg:
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, hdr.FileInfo().Mode().Perm())
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		return errors.Join(err, f.Close())
	}
	return nil // nothing else is archived
}
