package model

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 4, 25, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		hdr  []string
		want time.Duration
	}{
		{"none", nil, 0},
		{"seconds", []string{"Retry-After", "12"}, 12 * time.Second},
		{"fractional seconds", []string{"Retry-After", "1.5"}, 1500 * time.Millisecond},
		{"HTTP date", []string{"Retry-After", "Fri, 25 Apr 2025 12:00:30 GMT"}, 30 * time.Second},
		{"a date past", []string{"Retry-After", "Fri, 25 Apr 2025 11:00:00 GMT"}, 0},
		{"milliseconds win", []string{"Retry-After", "12", "Retry-After-Ms", "40"}, 40 * time.Millisecond},
		{"negative", []string{"Retry-After", "-3"}, 0},
		{"garbage", []string{"Retry-After", "soon"}, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for i := 0; i+1 < len(tt.hdr); i += 2 {
			h.Set(tt.hdr[i], tt.hdr[i+1])
		}
		if got := retryAfter(h, now); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	p := retryPolicy{base: time.Second, maxWait: 10 * time.Second}
	for n, full := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 80: 10 * time.Second} {
		for range 50 {
			if d := p.delay(n, 0); d < full/2 || d > full {
				t.Fatalf("delay(%d) = %v, want within [%v, %v]", n, d, full/2, full)
			}
		}
	}
	if d := p.delay(3, 7*time.Second); d != 7*time.Second {
		t.Errorf("delay with Retry-After = %v", d)
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	for in, want := range map[int]int{0: defaultRetries, -1: 0, 7: 7} {
		if got := newRetryPolicy(in).retries; got != want {
			t.Errorf("newRetryPolicy(%d).retries = %d, want %d", in, got, want)
		}
	}
}
