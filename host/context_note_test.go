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
		cut := cutResult(line+"\n", limit, readers{readFile: true, grep: true})
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
	if note := cutResult(lines, 750, readers{readFile: true, grep: true}); !strings.Contains(note, "read_file takes offset and limit, in lines") ||
		!strings.Contains(note, "only in this request") {
		t.Errorf("a result of short lines: %s", note[strings.LastIndex(note, "[cairn:"):])
	}
}

// Regression: the note on a cut result named read_file and grep whatever
// tools the agent had: with the built-in grep alone, with no built-in
// tools, or with a read_file of another module that takes other
// arguments. It names only the built-in tools the request offers.
func TestCutResultNoteNamesOnlyOfferedTools(t *testing.T) {
	other := model.Tool{Name: "read_file", Description: "Reads a file.", InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"},"head":{"type":"integer"}}}`)}
	for _, c := range []struct {
		name    string
		tools   string
		extra   []model.Tool
		want    []string
		wantNot []string
	}{
		{"read_file and grep", "[{module: builtin}]", nil, []string{"read_file takes offset and limit", "(grep)"}, nil},
		{"grep alone", "[{module: builtin, only: [grep]}]", nil, []string{"(grep)"}, []string{"read_file"}},
		{"read_file alone", "[{module: builtin, only: [read_file]}]", nil, []string{"read_file takes offset and limit"}, []string{"grep"}},
		{"no built-in tools", "[{module: builtin, only: [write_file]}]", nil, nil, []string{"read_file", "grep", "To read more"}},
		{"another read_file", "[{module: builtin, only: [write_file]}]", []model.Tool{other}, nil, []string{"read_file", "grep", "To read more"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			af, err := ParseAgentFile([]byte("name: a\nmodel: {provider: script}\ntools: "+c.tools+"\ncontext: {budget: 8000}\n"), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			st := threeRounds(10)
			st.Messages[len(st.Messages)-1].Text = strings.Repeat("     1\ta line of the notes the agent reads\n", 2000)
			w, err := newWindow(af.Context, af.System, append(af.fileTools(), c.extra...), st)
			if err != nil {
				t.Fatal(err)
			}
			shown := w.msgs[len(w.msgs)-1].Text
			note := shown[strings.LastIndex(shown, "[cairn:"):]
			if !strings.Contains(note, "only in this request") {
				t.Fatalf("the last result is not shown cut: %.200s", note)
			}
			for _, want := range c.want {
				if !strings.Contains(note, want) {
					t.Errorf("the note does not say %q: %s", want, note)
				}
			}
			for _, not := range c.wantNot {
				if strings.Contains(note, not) {
					t.Errorf("the note says %q: %s", not, note)
				}
			}
		})
	}
}
