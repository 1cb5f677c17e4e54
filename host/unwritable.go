package host

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrStoreUnwritable is matched by the error of a run that stopped at its
// last committed round because the store could not be written (its disk
// full or over quota, or its file system read-only) and that could not
// record its end either. Nothing committed is lost: once the store can be
// written again, resuming the agent goes on from that round.
var ErrStoreUnwritable = errors.New("the store could not be written")

// unwritable says why err, a failed write of the store or the workspace
// (the error names the file), may pass once someone makes room, raises a
// limit or remounts: what happened and what to do, or "" for any other
// error.
func unwritable(err error) string {
	const resume = " and resume, which goes on from the last committed round"
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the disk it writes to is full: free space on it (or raise the quota)" + resume
	case errors.Is(err, syscall.EFBIG):
		return "the file would pass the largest size allowed (the process's ulimit -f, or the file system's): raise the limit" + resume
	case errors.Is(err, syscall.EROFS):
		return "its file system is read-only: mount it read-write" + resume
	}
	return ""
}

// endNotRecorded is the error of a run whose end could not be journaled:
// it says how the run ended too, which would otherwise be lost, and it is
// ErrStoreUnwritable when the store could not be written.
func endNotRecorded(agent, run string, status Status, reason string, err error) error {
	e := fmt.Errorf("agent %q %s at its last committed round, which run %s could not record (%w): %s", agent, status, run, err, reason)
	if unwritable(err) != "" {
		return unwritableError{e}
	}
	return e
}

// unwritableError is an error that is ErrStoreUnwritable.
type unwritableError struct{ error }

func (e unwritableError) Is(target error) bool { return target == ErrStoreUnwritable }
func (e unwritableError) Unwrap() error        { return e.error }
