package sandbox

import (
	"testing"
)

// Regression: fd_pread and fd_pwrite at an offset of 2^63 or more, which
// the host reads as negative, were EPERM, the errno of an escape: Go's
// ReadAt and WriteAt refuse a negative offset with an error that carries
// no errno. They are EINVAL (28), as pread(2) and pwrite(2) say, on a
// plain mount and on an overlay, appending or not.
func TestNegativeOffsetIsEINVAL(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			_, got := escapeRun(t, guestBytes["rawwasi"], kind)
			for _, name := range []string{"pread-negative", "pwrite-negative", "pwrite-negative-append"} {
				if got[name] != "28" {
					t.Errorf("%s: errno %q, want 28 (EINVAL)", name, got[name])
				}
			}
		})
	}
}
