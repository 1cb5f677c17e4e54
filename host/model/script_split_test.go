package model

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// long repeats the turns of block n times under "turns:", with head
// before and tail after.
func long(head, block, tail string, n int) string {
	return head + "turns:\n" + strings.Repeat(block, n) + tail
}

// A long script parsed a turn at a time has the very turns, lines and
// summary that parsing it whole gives; a layout the split cannot be sure
// of is parsed whole.
func TestLazyScriptSameTurns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		lazy   bool
	}{
		{"flow calls", long("", "  - tool_calls: [{name: read_file, input: {path: f.txt}}]\n", "", 150), true},
		{"block calls and comments", long("# a script\n", `  # a comment
  - text: looking # and here
    tool_calls:
      - name: read_file
        input: {path: "a # b.txt"}
      - {name: bad, input_json: '{"x": '}

`, "summary: all read\n", 120), true},
		{"alternatives", long("summary: first\n", `  - alternatives:
      - when: {tool: read_file, contains: "TODO: ]"}
        text: open items
      - text: "all: clear"
`, "", 120), true},
		{"block scalar", long("", "  - text: |\n      one\n      - two ]\n", "", 110), true},
		{"block scalar with a quote", long("", "  - text: |\n      one\n      \"two\n", "", 110), false},
		{"at column 0", long("", "- text: a\n- {tool_calls: [{name: x}]}\n", "summary: s\n", 60), true},
		{"a null turn", long("", "  - text: a\n  - ~\n", "", 60), false},
		{"crlf", strings.ReplaceAll(long("", "  - text: a\n", "", 120), "\n", "\r\n"), true},
		{"few turns", long("", "  - text: a\n", "", lazyTurns), false},
		{"multi-line quote", long("", "  - text: \"one\n  - two\"\n", "", 120), false},
		{"multi-line flow", long("", "  - tool_calls: [\n  {name: x}]\n", "", 120), false},
		{"anchor", long("", "  - &a {text: x}\n", "", 120), false},
		{"key in a quote", long("summary: \"s\n", "- text: a\n", "\"\n", 120), false},
		{"document marker", "---\n" + long("", "  - text: a\n", "", 120), false},
		{"no calls", long("", "  - {text: a, tool_calls: []}\n  - text: b\n    tool_calls: [{name: x}]\n", "", 60), true},
		{"more distinct turns than are kept", distinctTurns(3 * maxSeen), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameTurns(t, []byte(tc.script), tc.lazy)
		})
	}
}

// distinctTurns is a script of n turns of two calls, no two alike.
func distinctTurns(n int) string {
	var b strings.Builder
	b.WriteString("turns:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - text: turn %d\n    tool_calls:\n      - {name: read_file, input: {path: f%d.txt}}\n      - {name: t%d}\n", i, i%7, i)
	}
	return b.String()
}

// sameTurns checks that ParseScript, lazily when lazy, has the turns of
// parseWhole; data must parse whole.
func sameTurns(t *testing.T, data []byte, lazy bool) {
	t.Helper()
	whole, err := parseWhole(data)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseScript(data)
	if err != nil {
		t.Fatal(err)
	}
	if (s.lazy != nil) != lazy {
		t.Fatalf("parsed a turn at a time: %v, want %v", s.lazy != nil, lazy)
	}
	if s.count() != len(whole.turns) || s.summary != whole.summary {
		t.Fatalf("%d turns, summary %q; whole: %d, %q", s.count(), s.summary, len(whole.turns), whole.summary)
	}
	for n := range whole.turns {
		got, err := s.turn(n)
		if err != nil || !reflect.DeepEqual(got, whole.turns[n]) {
			t.Fatalf("turn %d: %+v, %v; whole: %+v", n, got, err, whole.turns[n])
		}
	}
}

// An error in a long script's later turn is reported when the run reaches
// it, with its line, and the turns before it play.
func TestLazyScriptErrorWhenPlayed(t *testing.T) {
	script := long("", "  - text: a\n", "  - tool_calls:\n      - {input: {}}\n", 150)
	s, err := ParseScript([]byte(script))
	if err != nil || s.lazy == nil {
		t.Fatalf("parse: %v (lazy %v)", err, s != nil && s.lazy != nil)
	}
	if _, err := s.Complete(context.Background(), Request{Earlier: 149}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Complete(context.Background(), Request{Earlier: 150})
	if err == nil || !strings.Contains(err.Error(), "line 153: a tool call has no name") {
		t.Fatalf("turn 151: %v", err)
	}
}

// FuzzSplitTurns: whenever a script parses whole and splits, each turn
// parsed apart is the turn parsed whole.
func FuzzSplitTurns(f *testing.F) {
	f.Add([]byte(long("", "  - text: a\n    tool_calls: [{name: x}]\n", "summary: s\n", 3)))
	f.Add([]byte(long("", "  - text: 'a\n  - b'\n", "", 3)))
	f.Add([]byte(long("", "- text: \"a\\\"\n- b\"\n", "", 3)))
	f.Add([]byte(long("", "  - {text: a,\n  - b}\n", "", 3)))
	f.Add([]byte(long("summary: \"s\n", "- text: a\n", "\"\n", 3)))
	f.Fuzz(func(t *testing.T, data []byte) {
		layout, ok := splitTurns(data)
		if !ok {
			return
		}
		whole, err := parseWhole(data)
		if err != nil {
			return
		}
		s, err := parseLazy(data, layout)
		if err != nil {
			t.Fatalf("the rest of a script that parses whole: %v", err)
		}
		if s.count() != len(whole.turns) || s.summary != whole.summary {
			t.Fatalf("%d turns, summary %q; whole: %d, %q", s.count(), s.summary, len(whole.turns), whole.summary)
		}
		for n := range whole.turns {
			got, err := s.turn(n)
			if err != nil || !reflect.DeepEqual(got, whole.turns[n]) {
				t.Fatalf("turn %d: %+v, %v; whole: %+v", n, got, err, whole.turns[n])
			}
		}
	})
}
