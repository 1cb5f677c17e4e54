package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// HasBlob reports whether the store keeps a blob under digest, and marks
// it fresh as PutBlob does, so that Collect leaves it to whoever relies on
// it now. A caller that already knows the digest of its bytes (a tool
// module it has stored before) asks this instead of hashing them again
// with PutBlob. It checks that the file is there, not its content; Blob
// checks the content, and PutBlob repairs it.
func (s *FileStore) HasBlob(digest string) bool {
	hexSum, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || len(hexSum) != 64 || strings.ContainsAny(hexSum, `/\.`) {
		return false
	}
	path := filepath.Join(s.dir, "blobs", "sha256", hexSum)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	now := time.Now()
	os.Chtimes(path, now, now)
	return true
}
