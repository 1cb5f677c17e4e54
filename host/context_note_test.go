package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/host/model"
)

// Regression: the note on a cut result told the model to ask read_file
// for a smaller part, in lines, or to grep, though the result was one line
// of 91 KB: read_file shows that whole line again, cut again, and grep
// shows 300 bytes of it. The note says the cut is this request's alone
// and what part is shown, and points to reading by lines only when the
// line at the cut is one a result can show.
func TestCutResultNoteOfALongLineIsTrue(t *testing.T) {
	line := "     1\t" + strings.Repeat("word17611 ", 9100)
	for _, limit := range []int{750, 2000} {
		cut := cutResult(line+"\n", limit)
		if n := model.EstimateTokens(cut); n > limit {
			t.Fatalf("cut to %d: %d tokens", limit, n)
		}
		note := cut[strings.LastIndex(cut, "[cairn:"):]
		if strings.Contains(note, "offset and limit") || strings.Contains(note, "grep") {
			t.Errorf("cut to %d: the note points to reading by lines or grep, which show the line cut again: %s", limit, note)
		}
		for _, want := range []string{
			fmt.Sprintf("the first %d of its %d bytes are shown", len(cut)-len(note)-1, len(line)+1),
			"only in this request",
			fmt.Sprintf("The line at the cut is %d bytes long", len(line)),
		} {
			if !strings.Contains(note, want) {
				t.Errorf("cut to %d: the note does not say %q: %s", limit, want, note)
			}
		}
	}
	// Lines a result can show: reading a smaller part helps.
	lines := strings.Repeat("     1\ta line of the notes the agent reads\n", 2000)
	if note := cutResult(lines, 750); !strings.Contains(note, "read_file takes offset and limit, in lines") ||
		!strings.Contains(note, "only in this request") {
		t.Errorf("a result of short lines: %s", note[strings.LastIndex(note, "[cairn:"):])
	}
}
