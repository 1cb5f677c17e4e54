package sandbox

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// Regression: calls wazero's answered otherwise than Linux, on a plain
// mount and an overlay. fd_seek with a whence WASI does not have (3, 4)
// was the host's SEEK_DATA and SEEK_HOLE, and moved the offset (to 0, from
// 2); it is EINVAL and moves nothing. fd_allocate of an empty range
// succeeded; fallocate(2) and posix_fallocate(3) refuse one (EINVAL), as
// posix_fadvise(2) refuses a negative length, which fd_advise of a length
// past int64's took.
// fd_fdstat_set_flags with NONBLOCK was ENOSYS on a file and EISDIR on a
// directory, where fcntl(2) sets it on either; it succeeds, and changes
// nothing, since a workspace file never blocks. fd_filestat_set_times and
// path_filestat_set_times with fstflags bits WASI does not define set
// the times, ignoring them; they are EINVAL, as utimensat(2) refuses
// flags and times it does not know; so too path_filestat_get,
// path_filestat_set_times and path_link with lookupflags bits WASI does not
// define, which wazero's ignored (path_link, which cairn refuses, was
// EPERM), as fstatat(2), utimensat(2) and linkat(2) refuse flags they do
// not know (EINVAL).
func TestOddCallsAnswerAsLinux(t *testing.T) {
	want := map[string]string{"odd-seek-whence-3": "28 2", "odd-seek-whence-4": "28 2",
		"odd-allocate-empty": "28", "odd-advise-negative": "28", "odd-nonblock-file": "0", "odd-nonblock-dir": "0",
		"odd-settimes-flag-16": "28", "odd-pathsettimes-flag-16": "28",
		"odd-settimes-flag-32768": "28", "odd-pathsettimes-flag-32768": "28",
		"odd-lookup-stat-2": "28", "odd-lookup-settimes-2": "28", "odd-lookup-link-2": "28",
		"odd-lookup-stat-2147483648": "28", "odd-lookup-settimes-2147483648": "28", "odd-lookup-link-2147483648": "28"}
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, false)
			mounts := f.mounts()
			if kind == "overlay" {
				ov, _ := newOverlay(t, f.ws)
				mounts[0] = Mount{GuestPath: "/work", Overlay: ov}
			}
			var out bytes.Buffer
			if _, err := compile(t, "rawwasi").Run(context.Background(), Policy{Args: []string{"oddcalls"}, Mounts: mounts}, nil, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			wantErrnos(t, results(out.String()), want)
		})
	}
}
