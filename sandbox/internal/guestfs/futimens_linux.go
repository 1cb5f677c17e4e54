package guestfs

import (
	"os"
	"unsafe"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"
)

// futimens sets an open file's times, in nanoseconds since the epoch, or
// leaves one as it is for experimentalsys.UTIME_OMIT. It is futimens(3)
// as glibc makes it, utimensat(2) with the descriptor and no path, which
// golang.org/x/sys does not offer: its Futimes goes through
// /proc/self/fd (by a name, and only where /proc is mounted) at
// microsecond precision, and UtimesNanoAt with AT_EMPTY_PATH needs Linux
// 5.8.
func futimens(f *os.File, atim, mtim int64) error {
	ts := [2]unix.Timespec{timespec(atim), timespec(mtim)}
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, fd, 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
		if e != 0 {
			serr = e
		}
	}); err != nil {
		return err
	}
	return serr
}

func timespec(ns int64) unix.Timespec {
	if ns == experimentalsys.UTIME_OMIT {
		return unix.Timespec{Nsec: unix.UTIME_OMIT}
	}
	return unix.NsecToTimespec(ns)
}

// lutimens sets the times of the entry name of the directory d without
// following it, if it is a symlink, a directory, or a regular file with
// one name: an entry with another name, which may be outside the mount,
// or a special file is refused (EACCES), as opening one is (Allowed). It
// is utimensat(2) with AT_SYMLINK_NOFOLLOW, after fstatat(2) of the same
// name with it, both relative to d, so neither leaves the directory.
func lutimens(d *os.File, name string, atim, mtim int64) error {
	ts := []unix.Timespec{timespec(atim), timespec(mtim)}
	raw, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		var st unix.Stat_t
		if serr = unix.Fstatat(int(fd), name, &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil {
			return
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
		case unix.S_IFLNK, unix.S_IFREG:
			if st.Nlink > 1 {
				serr = unix.EACCES
				return
			}
		default:
			serr = unix.EACCES
			return
		}
		serr = unix.UtimesNanoAt(int(fd), name, ts, unix.AT_SYMLINK_NOFOLLOW)
	}); err != nil {
		return err
	}
	return serr
}
