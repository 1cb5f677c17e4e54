package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
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
