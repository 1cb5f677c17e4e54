package sandbox

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// Regression: poll_oneoff of a clock with the flag abstime, whose timeout
// is a time of its clock (wasi-libc's clock_nanosleep with TIMER_ABSTIME
// subscribes so), was ENOTSUP. It waits until the clock reads that time,
// as Linux's clock_nanosleep(2) does, and a time past is come at once;
// an abstime clock of an id no clock has is EINVAL, and so is a relative
// one, which wazero's took (clock_nanosleep(2) of a clock Linux has not is
// EINVAL whatever its flags).
func TestPollOfAnAbsoluteTimeWaitsForIt(t *testing.T) {
	var out bytes.Buffer
	p := Policy{Args: []string{"abstime"}, RealClock: true}
	if _, err := compile(t, "rawwasi").Run(context.Background(), p, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	wantErrnos(t, results(out.String()), map[string]string{
		"abstime-later": "0 1 0 true", "abstime-past": "0 1 0 true", "abstime-no-clock": "28 0 0 true",
		"relative-no-clock": "28 0 0 true"})
}
