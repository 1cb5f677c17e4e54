package sandbox

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// pollWant is what testdata/pollprog prints: a subscription to read stdin,
// or to write stdout, stderr or a file, is ready at once, and the clock of
// 10 seconds subscribed beside it is not reported; one to a descriptor
// not open is EBADF (8), and one to read a file opened only to write
// ENOTCAPABLE (76).
const pollWant = `stdin 0 1:1:0
stdout-stderr 0 1:2:0 2:2:0
closed 0 1:2:8
write-only 0 1:1:76 2:2:0
`

// Regression: poll_oneoff answered a subscription to write stdout or
// stderr (or any file) with ENOTSUP, and reported the clock subscribed
// beside it as if its time had come.
func TestPollWriteReadyAtOnce(t *testing.T) {
	m := compile(t, "pollprog")
	for _, kind := range mountKinds {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			mt := Mount{HostPath: ws, GuestPath: "/work"}
			if kind == "overlay" {
				ov, _ := newOverlay(t, ws)
				mt = Mount{GuestPath: "/work", Overlay: ov}
			}
			var stdout, stderr bytes.Buffer
			p := Policy{Args: []string{"/work/polled.txt"}, Mounts: []Mount{mt}, RealClock: true}
			start := time.Now()
			ex, err := m.Run(context.Background(), p, strings.NewReader("input"), &stdout, &stderr)
			if err != nil || ex.Code != 0 {
				t.Fatalf("run: %v, exit %d: %s%s", err, ex.Code, stdout.String(), stderr.String())
			}
			if got := stdout.String(); got != pollWant {
				t.Errorf("the guest printed\n%s\nwant\n%s", got, pollWant)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the guest took %s: a poll waited for its clock", d)
			}
		})
	}
}
