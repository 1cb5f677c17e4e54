package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cairnrun/cairn/sandbox/internal/wasmcode"
)

// Errors a caller branches on: a call stopped at its deadline, a request
// refused for its size, a response past the output cap, a module refused
// for what compiling it would cost. Call and Run wrap them with what happened.
var (
	ErrDeadline = errors.New("deadline exceeded")
	// ErrRequestTooLarge is a call whose request is larger than the
	// module may read (Policy.StdinLimit, abi.MaxMessageSize); it is
	// refused before the module runs.
	ErrRequestTooLarge = errors.New("request too large")
	// ErrOutputLimit is a call whose response passed the output cap
	// (Policy.StdoutLimit): the response is not read.
	ErrOutputLimit = errors.New("its output passed the cap")
	// ErrMemoryLimit is a call whose module ran out of the memory the
	// policy allows it (Policy.MemoryLimit), or whose memory starts
	// larger than that.
	ErrMemoryLimit = errors.New("memory limit reached")
	// ErrCompileLimit is a module refused before compiling, or stopped
	// while compiling, for a limit of Config: its size, its functions,
	// its largest function, its compile time.
	ErrCompileLimit = errors.New("module too large to compile")
)

// The other ways a call fails, which the error's text says and no caller
// outside the package branches on; the package's tests do.
var (
	errInvalidModule = wasmcode.ErrInvalid
	errImportDenied  = errors.New("module imports a host function it is not allowed")
	errTrap          = errors.New("module trapped")
	errExit          = errors.New("module exited with an error")
	errBadResponse   = errors.New("module did not write a valid response")
)

// exitError is a non-zero exit of a tool call, with what the tool logged.
type exitError struct {
	Code       uint32
	StderrTail string
}

func (e *exitError) Error() string {
	msg := fmt.Sprintf("module exited with status %d", e.Code)
	if e.StderrTail != "" {
		msg += "; its log ends: " + e.StderrTail
	}
	return msg
}

// Is makes errors.Is(err, errExit) hold.
func (e *exitError) Is(target error) bool { return target == errExit }

// tail is the last few lines of a log, on one line, in UTF-8: what is
// not UTF-8 becomes U+FFFD, and a cut falls between characters.
func tail(log []byte) string {
	lines := strings.Split(strings.TrimSpace(strings.ToValidUTF8(string(log), "\uFFFD")), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	s := strings.Join(lines, " | ")
	if len(s) > 400 {
		cut := len(s) - 400
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = "…" + s[cut:]
	}
	return s
}
