package sandbox

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/tetratelabs/wazero/sys"
)

// Regression: a guest that called proc_exit with the status wazero gives a
// module it closes at its context's end (0xffffffff cancelled, 0xefffffff
// past its deadline) was reported as cancelled (context.Canceled) or as
// stopped at its deadline (ErrDeadline), though it was neither: a tool
// could pass for a call the host or the user stopped. It is the guest's
// own status, a failure, as exit(3) of it is a non-zero status on Linux.
func TestGuestExitCodeIsNotAStop(t *testing.T) {
	m := compile(t, "rawwasi")
	for _, code := range []uint32{sys.ExitCodeContextCanceled, sys.ExitCodeDeadlineExceeded, 3} {
		t.Run(strconv.FormatUint(uint64(code), 16), func(t *testing.T) {
			ex, err := m.Run(context.Background(), Policy{Args: []string{"exit", strconv.FormatUint(uint64(code), 10)}}, nil, io.Discard, io.Discard)
			if err != nil || ex.Code != code {
				t.Errorf("exit %#x, %v; want exit %#x and no error", ex.Code, err, code)
			}
		})
	}
}
