package sandbox

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Regression: fd_pread and fd_pwrite at an offset of 2^63 or more, which
// the host reads as negative, were EPERM, the errno of an escape: Go's
// ReadAt and WriteAt refuse a negative offset with an error that carries
// no errno. They are EINVAL (28), as pread(2) and pwrite(2) say, on a
// plain mount and on an overlay, appending or not.
func TestNegativeOffsetIsEINVAL(t *testing.T) {
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			_, got := escapeRun(t, guestBytes["rawwasi"], kind)
			for _, name := range []string{"pread-negative", "pwrite-negative", "pwrite-negative-append"} {
				if got[name] != "28" {
					t.Errorf("%s: errno %q, want 28 (EINVAL)", name, got[name])
				}
			}
		})
	}
}

// Regression: poll_oneoff answers each subscription to a descriptor in
// the host, where no stop check runs: 8 million of them (384 MB of the
// guest's memory) kept a call going for seconds after it had to stop, at
// its deadline or when cancelled (15 million, 13 s past a deadline of
// 8 s). It now stops when the call must, and the call with it.
func TestPollOfManySubscriptionsStopsWithTheCall(t *testing.T) {
	m := compile(t, "rawwasi")
	p := Policy{Args: []string{"poll", "1"}, MemoryLimit: 512 << 20}
	var out bytes.Buffer
	if _, err := m.Run(context.Background(), p, nil, &out, &out); err != nil {
		t.Fatalf("a poll of one subscription: %v: %s", err, out.String())
	}
	// The call is cancelled 100 ms after the guest says it calls
	// poll_oneoff, which then holds millions of subscriptions.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	var once sync.Once
	var stopped atomic.Pointer[time.Time]
	stderr := writerFunc(func(b []byte) (int, error) {
		once.Do(func() {
			time.AfterFunc(100*time.Millisecond, func() {
				now := time.Now()
				stopped.Store(&now)
				cancel()
			})
		})
		return len(b), nil
	})
	p.Args[1] = "8000000"
	_, err := m.Run(ctx, p, nil, &stdout, stderr)
	if stopped.Load() == nil {
		t.Fatalf("the guest did not reach poll_oneoff, or the call ended before it was cancelled: %v: %q", err, stdout.String())
	}
	late := time.Since(*stopped.Load())
	t.Logf("the call ended %s after it was cancelled: %v; %s", late, err, stdout.String())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the call ended with %v, want context.Canceled", err)
	}
	if late > time.Second {
		t.Errorf("the call ended %s after it was cancelled", late)
	}
}

// writerFunc is an io.Writer that is a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// Regression: wazero's fd_write writes each of its iovecs with a call of
// the file's Write, in the host, where no stop check runs; to a workspace
// file each is a system call (two on an overlay). 3 million iovecs of
// one byte (24 MB of the guest's memory) held a call with a deadline of
// 1 s for 23 s on a plain mount and 31 s on an overlay. A workspace file
// now fails its reads and writes (EINTR) once the call must stop, and the
// call ends at its deadline.
func TestWriteOfManyIovecsEndsAtTheDeadline(t *testing.T) {
	const timeout = time.Second
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			if kind == "overlay" {
				ov, _ := newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			p := Policy{Args: []string{"writev", "f", "3000000"}, Mounts: []Mount{mt}, Timeout: timeout}
			var stdout bytes.Buffer
			stderr := &stamped{}
			_, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &stdout, stderr)
			if stderr.at.IsZero() {
				t.Fatalf("the guest did not reach fd_write before its deadline: %v: %q", err, stdout.String())
			}
			late := time.Since(stderr.at)
			t.Logf("the call ended %s after the guest called fd_write: %v; %s", late, err, stdout.String())
			if !errors.Is(err, ErrDeadline) {
				t.Errorf("the call ended with %v, want ErrDeadline", err)
			}
			if late > timeout+time.Second {
				t.Errorf("the call ended %s after the guest called fd_write, with a deadline of %s", late, timeout)
			}
		})
	}
}

// stamped notes when it is first written to.
type stamped struct {
	mu sync.Mutex
	at time.Time
}

func (s *stamped) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at.IsZero() {
		s.at = time.Now()
	}
	return len(p), nil
}
