package guestfs

import (
	"errors"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// TestNewDirBlocksOnAFIFORoot: a mount whose host directory was replaced
// by a FIFO (between two calls, say) is refused at once. Opening it to
// read would wait for a writer, holding up the call before its deadline
// is set, and with it Trim and every call after.
//
// The test tells a blocked open from a refusal without timing it: a
// writer's non-blocking open of a FIFO succeeds only while a reader has
// it open or is waiting in open.
func TestNewDirBlocksOnAFIFORoot(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ws")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		d, err := NewDir(fifo, true, NewBudget(1))
		if err == nil {
			d.Close()
			done <- errors.New("a FIFO opened as a mount")
			return
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		fd, err := syscall.Open(fifo, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			syscall.Close(fd) // the reader waiting in open goes on
			<-done
			t.Fatal("opening a mount that is a FIFO waited for a writer")
		}
		runtime.Gosched()
	}
}
