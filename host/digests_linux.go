package host

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileIdentity is a file's device, inode and change time: the change time
// moves on every write, whatever the modification time is set to.
func fileIdentity(fi fs.FileInfo) (string, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d:%d %d", st.Dev, st.Ino, st.Ctim.Nano()), true
}
