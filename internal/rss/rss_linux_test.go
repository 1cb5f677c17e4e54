//go:build linux

package rss

import "testing"

// After a reset the peak is at least the size the reset read, and
// touching 64 MiB more raises it by about that much.
func TestPeakFollowsTheReset(t *testing.T) {
	base, err := ResetPeak()
	if err != nil {
		t.Skipf("no peak to reset here: %v", err)
	}
	if base <= 0 {
		t.Fatalf("resident set size %d after a reset", base)
	}
	b := make([]byte, 64<<20)
	for i := range b {
		if i%4096 == 0 {
			b[i] = 1
		}
	}
	peak, err := Peak()
	if err != nil {
		t.Fatal(err)
	}
	if peak < base+48<<20 {
		t.Fatalf("peak %d MiB after touching 64 MiB from %d MiB", peak>>20, base>>20)
	}
	_ = b[len(b)-1]
}

func TestStatusOfAMissingField(t *testing.T) {
	if _, err := status("NoSuchField"); err == nil {
		t.Fatal("a field /proc/self/status lacks was read")
	}
}
