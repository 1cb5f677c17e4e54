package sandbox

import "testing"

// Regression: fd_write and fd_pwrite of a directory's descriptor were
// EISDIR; Linux answers EBADF, since a directory is never open for
// writing (open(2) refuses to open one so, EISDIR, as path_open with the
// right to write does). They are EBADF, of a preopen, which has every
// right, on a plain mount and an overlay.
func TestWriteToADirectoryIsEBADF(t *testing.T) {
	m := compile(t, "rawwasi")
	ws := linkDotsFixture(t, t.TempDir())
	want := linuxPathCall(ws, "writedir", ".", "")
	for _, kind := range mountKinds {
		if got := cairnPathCall(t, m, kind, ws, "writedir", ".", ""); got != want {
			t.Errorf("%s: write to the preopen: %s, Linux says %s", kind, got, want)
		}
	}
}

// Regression: fd_allocate of a directory's descriptor was EISDIR, and
// fd_filestat_set_size EISDIR too; Linux answers EBADF for fallocate(2)
// of a descriptor not open for writing, as a directory's never is, and
// EINVAL for ftruncate(2) of one. They answer so, of a preopen, on a
// plain mount and an overlay.
func TestResizeOfADirectoryAnswersAsLinux(t *testing.T) {
	m := compile(t, "rawwasi")
	ws := linkDotsFixture(t, t.TempDir())
	want := linuxPathCall(ws, "resizedir", ".", "")
	for _, kind := range mountKinds {
		if got := cairnPathCall(t, m, kind, ws, "resizedir", ".", ""); got != want {
			t.Errorf("%s: allocate and set the size of the preopen: %s, Linux says %s", kind, got, want)
		}
	}
}
