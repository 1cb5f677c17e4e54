package syncpoint

import "os"

// SyncFile flushes a file or a directory to stable storage (fsync): a
// file's content, or a directory's entries (what a create, rename or
// remove in it did).
func SyncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		Synced(name)
	}
	return err
}
