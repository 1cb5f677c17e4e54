package sandbox

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Regression: the tail of a tool's log that the model reads (and the
// journal keeps) passed bytes that are not UTF-8 through, and its cut to
// 400 bytes could fall inside a character, so a tool that logged "€"s and
// exited non-zero left text that was not UTF-8 in the call's error.
func TestStderrTailIsUTF8(t *testing.T) {
	for name, log := range map[string]string{
		"bytes not UTF-8":     "bad \xff\xfe bytes\n",
		"cut inside a €":      strings.Repeat("€", 200) + "\n",
		"cut inside a € of 3": "x" + strings.Repeat("€", 200),
	} {
		got := tail([]byte(log))
		if !utf8.ValidString(got) {
			t.Errorf("%s: tail %q is not UTF-8", name, got)
		}
		if len(got) > 400+len("…") {
			t.Errorf("%s: tail of %d bytes", name, len(got))
		}
	}
	if got := tail([]byte("bad \xff bytes")); got != "bad \uFFFD bytes" {
		t.Errorf("tail = %q, want the byte as U+FFFD", got)
	}
}
