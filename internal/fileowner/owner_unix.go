//go:build unix

// Package fileowner says which user owns a file, where the system says:
// what the checks of a directory that others must not control (the
// compile cache, the staging of a store without a directory) ask.
package fileowner

import (
	"io/fs"
	"syscall"
)

// UID is the user id that owns the file fi describes, if the system says.
func UID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
