package guestfs

import (
	"context"
	"errors"
	"sync"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Errno is the errno a guest gets for err. A system error whose errno
// wazero's set lacks (ENOSPC, EDQUOT, EFBIG, …) is EIO, which the call's
// Unnamed turns into the guest's own errno where it can (see ErrnoIn);
// os.Root reports an escape as an error of its own, no errno, and that is
// EPERM.
func Errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return experimentalsys.UnwrapOSError(errno)
	}
	if e := experimentalsys.UnwrapOSError(err); e != experimentalsys.EIO {
		return e
	}
	return experimentalsys.EPERM
}

// Errno is Errno of err, an error of w's, telling the call's Unnamed the
// errno behind an EIO (see ErrnoIn).
func (w *Dir) Errno(err error) experimentalsys.Errno { return ErrnoIn(w.Ctx, err) }

// ErrnoIn is Errno of err, an error of a filesystem of the call whose
// context is ctx. When that is EIO for a system error whose errno
// wazero's set lacks, the call's Unnamed (in ctx, if any) is told it, so
// that the WASI function answering the guest answers that errno instead.
func ErrnoIn(ctx context.Context, err error) experimentalsys.Errno {
	e := Errno(err)
	if e != experimentalsys.EIO {
		return e
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if u := UnnamedOf(ctx); u != nil {
			u.Tell(errno)
		}
	}
	return e
}

// Unnamed carries, from a call's filesystems to the WASI function the
// guest called, the system errno behind an errno wazero's set has no name
// for: wazero's WASI functions can answer only the errnos of that set,
// and answer EIO for any other, where Linux answers ENOSPC, EDQUOT, EFBIG,
// EMFILE and more, each of which WASI preview 1 names too. A WASI
// function clears it before it acts (Clear) and answers, for the errno it
// was going to answer, the one told since, if any (Answer). A WASI
// preview 1 guest has one thread, in the one function that acts.
//
// It is safe for concurrent use: wazero may close the guest's files, which
// may tell it, from another goroutine once the call must stop.
type Unnamed struct {
	mu       sync.Mutex
	from, to uint16 // the WASI errno a function answers, and the one meant
}

// UnnamedOf is the Unnamed ctx carries (see WithCall), or nil.
func UnnamedOf(ctx context.Context) *Unnamed {
	if c := callOf(ctx); c != nil {
		return &c.unnamed
	}
	return nil
}

// Tell records errno, a system error a filesystem answered EIO for. One
// WASI has no name for is not recorded: the guest gets EIO.
func (u *Unnamed) Tell(errno syscall.Errno) {
	if to, ok := wasiErrno[errno]; ok {
		u.set(wasiEIO, to)
	}
}

// TellFiles records that a call was refused a file past its budget of
// open files, which wazero's set can answer only as EAGAIN: the guest gets
// EMFILE, as open(2) says past the process's limit.
func (u *Unnamed) TellFiles() { u.set(wasiEAGAIN, wasiEMFILE) }

// Clear forgets what was told.
func (u *Unnamed) Clear() { u.set(0, 0) }

func (u *Unnamed) set(from, to uint16) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.from, u.to = from, to
}

// Answer is the WASI errno to answer for errno, the one a WASI function
// was going to answer.
func (u *Unnamed) Answer(errno uint64) uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.from != 0 && errno == uint64(u.from) {
		return uint64(u.to)
	}
	return errno
}

// WASI preview 1's errnos of those, and of the system errors a
// filesystem may answer that wazero's set has no name for.
const (
	wasiEAGAIN = 6
	wasiEIO    = 29
	wasiEMFILE = 33
)

var wasiErrno = map[syscall.Errno]uint16{
	syscall.E2BIG: 1, syscall.EBUSY: 10, syscall.EDEADLK: 16, syscall.EDQUOT: 19, syscall.EFBIG: 22,
	syscall.EILSEQ: 25, syscall.EMFILE: 33, syscall.EMLINK: 34, syscall.ENFILE: 41, syscall.ENODEV: 43,
	syscall.ENOLCK: 46, syscall.ENOMEM: 48, syscall.ENOSPC: 51, syscall.ENXIO: 60, syscall.EOVERFLOW: 61,
	syscall.ESPIPE: 70, syscall.ESTALE: 72, syscall.ETIMEDOUT: 73, syscall.ETXTBSY: 74, syscall.EXDEV: 75,
}

// TakeFile reserves one open file of the call's budget (Files.Take); past
// it the guest is told EMFILE (see Unnamed.TellFiles).
func (w *Dir) TakeFile() experimentalsys.Errno {
	e := w.Files.Take()
	if u := UnnamedOf(w.Ctx); e != 0 && u != nil {
		u.TellFiles()
	}
	return e
}
