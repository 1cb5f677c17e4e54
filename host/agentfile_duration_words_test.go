package host

import (
	"strings"
	"testing"
)

// Regression: `max_time: 10` was refused as `time: missing unit in
// duration "10"`, Go's words, and `max_time: -1s` as "duration -1s is
// negative", neither saying what to write. Each says what a duration is
// written as.
func TestAgentFileDurationErrorsSayWhatToWrite(t *testing.T) {
	const head = "name: a\nmodel: {provider: script}\ntools: [{module: builtin}]\n"
	for body, want := range map[string]string{
		"limits: {max_time: -1s}\n": `line 4: duration "-1s" is negative: want one above 0, such as 30s or 1m30s`,
		"limits: {max_time: 10}\n":  `line 4: "10" is no duration: want one such as 30s or 1m30s, its unit written (ns, us, ms, s, m, h)`,
		"sandbox: {timeout: 1d}\n":  `line 4: "1d" is no duration: want one such as 30s or 1m30s`,
		"sandbox: {timeout: -2m}\n": `line 4: duration "-2m" is negative`,
		"sandbox: {timeout: -x}\n":  `line 4: "-x" is no duration`,
	} {
		if _, err := ParseAgentFile([]byte(head+body), t.TempDir()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", body, err, want)
		}
	}
}
