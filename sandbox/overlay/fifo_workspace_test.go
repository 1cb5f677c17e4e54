package overlay_test

import (
	"errors"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/cairnrun/cairn/sandbox/overlay"
)

// TestNewBlocksOnAFIFOWorkspace: an overlay of a workspace replaced by a
// FIFO is refused at once, not left waiting for a writer (which would
// hold up the call before its deadline is set). A writer's non-blocking
// open of the FIFO succeeds only while a reader waits in open, which
// tells a blocked New from a refusal without timing it.
func TestNewBlocksOnAFIFOWorkspace(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ws")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		o, err := overlay.New(fifo, "")
		if err == nil {
			o.Close()
			done <- errors.New("an overlay of a FIFO was made")
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
			syscall.Close(fd)
			<-done
			t.Fatal("making an overlay of a FIFO waited for a writer")
		}
		runtime.Gosched()
	}
}
