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
