//go:build !linux

package guestfs

import (
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
	"golang.org/x/sys/unix"
)

// futimens sets an open file's times through its descriptor, leaving one
// as it is for experimentalsys.UTIME_OMIT. Outside Linux golang.org/x/sys
// offers only futimes(2), at microsecond precision and with no "omit", so
// an omitted time is read from the file first.
func futimens(f *os.File, atim, mtim int64) error {
	if atim == experimentalsys.UTIME_OMIT || mtim == experimentalsys.UTIME_OMIT {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		st := sys.NewStat_t(fi)
		if atim == experimentalsys.UTIME_OMIT {
			atim = st.Atim
		}
		if mtim == experimentalsys.UTIME_OMIT {
			mtim = st.Mtim
		}
	}
	tv := []unix.Timeval{unix.NsecToTimeval(atim), unix.NsecToTimeval(mtim)}
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = unix.Futimes(int(fd), tv) }); err != nil {
		return err
	}
	return serr
}

// lutimens would set the times of a symlink without following it; outside
// Linux it is refused (EPERM), and cairn changes no symlink's times.
func lutimens(*os.File, string, int64, int64) error { return unix.EPERM }
