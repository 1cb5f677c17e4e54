package guestfs

import (
	"context"
	"os"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Regression: a system error whose errno wazero's set lacks reached the
// guest as EIO. The call's Unnamed turns the EIO of each into the errno
// WASI preview 1 names it by (EDQUOT, which no test can make a root
// process meet, among them), and leaves EIO for one WASI has no name
// for, for an EIO that is one, and for a call not told.
func TestUnnamedErrnoIsAnswered(t *testing.T) {
	ctx := WithCall(context.Background())
	u := UnnamedOf(ctx)
	for _, c := range []struct {
		err  error
		want uint64
	}{
		{&os.PathError{Op: "write", Path: "f", Err: syscall.EDQUOT}, 19},
		{&os.PathError{Op: "write", Path: "f", Err: syscall.ENOSPC}, 51},
		{&os.PathError{Op: "truncate", Path: "f", Err: syscall.EFBIG}, 22},
		{&os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EMLINK}, 34},
		{syscall.ETXTBSY, 74},
		{syscall.EIO, 29},
		{syscall.ECHRNG, 29},
	} {
		u.Clear()
		if e := ErrnoIn(ctx, c.err); e != experimentalsys.EIO {
			t.Errorf("%v: %v, want EIO from the filesystem", c.err, e)
		}
		if got := u.Answer(29); got != c.want {
			t.Errorf("%v: the guest told %d, want %d", c.err, got, c.want)
		}
		if got := u.Answer(0); got != 0 {
			t.Errorf("%v: a call that succeeded told %d", c.err, got)
		}
	}
	u.Clear()
	if got := u.Answer(29); got != 29 {
		t.Errorf("an EIO no filesystem told of: %d, want 29", got)
	}
}
