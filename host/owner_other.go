//go:build !unix

package host

import "io/fs"

// ownerOf is the user id that owns the file fi describes: not known here.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }
