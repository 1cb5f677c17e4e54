// Package lockfile answers the question a flock of a named file leaves
// open: whether the file locked is still the one its path names. A
// process that takes the flock of a file another process is removing
// (or has moved aside and replaced) holds a lock of a file no one will
// look at again; checking that the path still names the file it has open,
// after the flock is taken, tells it to open the path again.
package lockfile

import "os"

// Names reports whether path names the file f has open (the same device
// and inode), without following a symlink at path.
func Names(path string, f *os.File) bool {
	a, err := os.Lstat(path)
	if err != nil {
		return false
	}
	b, err := f.Stat()
	return err == nil && os.SameFile(a, b)
}
