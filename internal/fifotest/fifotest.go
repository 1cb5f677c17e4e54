//go:build unix

// Package fifotest checks, for tests, that opening something refuses a
// FIFO at once rather than waiting for a writer. It tells a blocked open
// from a refusal without timing it: a writer's non-blocking open of a
// FIFO succeeds only while a reader has it open or is waiting in open.
package fifotest

import (
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// RefusedAtOnce makes a FIFO, runs open on its path on a goroutine, and
// fails the test if open waited for a writer or succeeded. open returns
// what to close when it succeeded.
func RefusedAtOnce(t *testing.T, open func(path string) (close func(), err error)) {
	t.Helper()
	RefusedAtOnceNamed(t, "ws", open)
}

// RefusedAtOnceNamed is RefusedAtOnce of a FIFO named name, for code that
// looks for a file of that name in a directory.
func RefusedAtOnceNamed(t *testing.T, name string, open func(path string) (close func(), err error)) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	opened := make(chan bool, 1)
	go func() {
		closeIt, err := open(fifo)
		if err == nil {
			closeIt()
		}
		opened <- err == nil
	}()
	for {
		select {
		case ok := <-opened:
			if ok {
				t.Fatal("a FIFO was opened as a directory")
			}
			return
		default:
		}
		fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			syscall.Close(fd) // the reader waiting in open goes on
			<-opened
			t.Fatal("opening a FIFO waited for a writer")
		}
		runtime.Gosched()
	}
}
