package host

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// longestDuration is the longest duration cairn counts: what a
// time.Duration holds, about 292 years.
const longestDuration = time.Duration(math.MaxInt64)

// durationSyntax is what time.ParseDuration reads: numbers, each with a
// unit, after an optional sign.
var durationSyntax = regexp.MustCompile(`^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)

// ParseDuration reads a duration such as "1m30s", as time.ParseDuration
// does.
//
// # Errors
//
// A *DurationTooLongError for a duration written as time.ParseDuration
// reads one but longer than a time.Duration holds, naming the longest;
// time.ParseDuration's error for what is no duration.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil && durationSyntax.MatchString(s) {
		if strings.HasPrefix(s, "-") {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		return 0, &DurationTooLongError{Duration: s}
	}
	return d, err
}

// DurationTooLongError is a duration longer than cairn counts.
type DurationTooLongError struct {
	Duration string // as written
}

func (e *DurationTooLongError) Error() string {
	return fmt.Sprintf("duration %q: longer than cairn counts; the longest is %s", e.Duration, e.Longest())
}

// Longest is the longest duration cairn counts, 2562047h47m16.854775807s.
func (e *DurationTooLongError) Longest() string { return longestDuration.String() }
