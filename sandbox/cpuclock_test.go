package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
)

// Regression: clock_res_get and clock_time_get of the clocks of the
// process's and the thread's CPU time (ids 2 and 3) were EINVAL; Linux and
// WASI preview 1 have them. They answer, with the fixed clock and the real
// one, a resolution above 0 and readings that do not go back; an id WASI
// has not (4) is still EINVAL. poll_oneoff does not wait on them (EINVAL):
// a one-thread guest's CPU time does not pass while it waits.
func TestCPUClocksAnswer(t *testing.T) {
	m := compile(t, "rawwasi")
	want := map[string]string{"clock-0": "0 0 true true", "clock-1": "0 0 true true",
		"clock-2": "0 0 true true", "clock-3": "0 0 true true", "clock-4": "28 28 false true",
		"clock-poll-0": "0", "clock-poll-1": "0", "clock-poll-2": "28", "clock-poll-3": "28", "clock-poll-4": "28"}
	for _, realClock := range []bool{false, true} {
		t.Run(fmt.Sprint("real clock ", realClock), func(t *testing.T) {
			var out bytes.Buffer
			p := Policy{Args: []string{"clocks"}, RealClock: realClock}
			if _, err := m.Run(context.Background(), p, nil, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			got := results(out.String())
			for name, w := range want {
				if got[name] != w {
					t.Errorf("%s: %q, want %q", name, got[name], w)
				}
			}
		})
	}
}
