package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// interruptible is a command's context. The first SIGINT or SIGTERM
// cancels it: the model request and the calls in flight stop, the agent
// stays at its last committed round, and the command exits as paused. A
// second signal ends the process at once, as if no handler were set; that
// is a crash like any other, and resume brings the agent back from it.
func interruptible(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-signals:
			// Before anything sees the stop: from now on a second signal
			// ends the process.
			signal.Stop(signals)
			cancel(errors.New(unix.SignalName(s.(syscall.Signal))))
		case <-ctx.Done():
			signal.Stop(signals)
		}
	}()
	return ctx, func() { cancel(nil) }
}

// survivePipes keeps a closed stdout or stderr from ending the process.
// Go's runtime ends a program with SIGPIPE when a write to fd 1 or 2 finds
// the pipe's reader gone (`cairn run ... | head -1`), whatever the program
// is doing: for a run, in the middle of a round, which resume then has to
// seal. Once SIGPIPE is notified to a channel, such a write fails with
// EPIPE instead, and dropWhenClosed lets the command go on.
//
// Notify, not signal.Ignore: an ignored signal stays ignored in the
// processes cairn starts (MCP command servers, the compiler apart), where
// a caught one is reset to its default on exec. The channel is never read:
// a broken socket or pipe to a child sends SIGPIPE too, and says nothing
// of stdout; once the channel is full, more of them are dropped.
func survivePipes() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// dropClosed is stdout for a process that survives its reader going away
// (survivePipes): once a write finds the pipe closed, what is written is
// taken and dropped. The command goes on as if it were read, to its end
// and its usual exit code: a run finishes its rounds instead of stopping,
// or failing with EPIPE, because nobody reads what it prints; a listing
// goes on to its end without a word. It is safe for concurrent use.
type dropClosed struct {
	w      io.Writer
	closed atomic.Bool
	note   atomic.Pointer[io.Writer] // where to say the reader is gone; nil for nowhere
}

func dropWhenClosed(stdout io.Writer) *dropClosed { return &dropClosed{w: stdout} }

// noteOn makes d say on w, once, when it finds its reader gone: for the
// commands that go on for long after (a run), so that whoever waits for
// the pipeline to end knows why it has not.
func (d *dropClosed) noteOn(w io.Writer) { d.note.Store(&w) }

// Write writes p, or drops it once the reader is gone: it fails only with
// an error other than EPIPE.
func (d *dropClosed) Write(p []byte) (int, error) {
	if d.closed.Load() {
		return len(p), nil
	}
	n, err := d.w.Write(p)
	if !errors.Is(err, syscall.EPIPE) {
		return n, err
	}
	if note := d.note.Load(); !d.closed.Swap(true) && note != nil {
		// stderr may be the same closed pipe: then nobody is told.
		fmt.Fprintln(*note, "cairn: warning: stdout was closed; cairn goes on to the run's end, and drops what it prints")
	}
	return len(p), nil
}
