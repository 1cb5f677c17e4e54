package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// makeStoreDirs makes the store's directories that are missing, and makes
// them durable (their entries synced) at once, so that creating an agent
// need not sync them again: it syncs only the directory that holds the
// agent's. A directory that exists was made durable by whoever made it
// (or, by a cairn from before this, synced with the first agent it made).
func makeStoreDirs(dir string) error {
	made := false
	for _, d := range []string{"agents", filepath.Join("blobs", "sha256")} {
		p := filepath.Join(dir, d)
		if _, err := os.Stat(p); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.MkdirAll(p, 0o700); err != nil {
			return err
		}
		made = true
	}
	if !made {
		return nil
	}
	return errors.Join(syncDir(filepath.Join(dir, "blobs")), syncDir(dir))
}
