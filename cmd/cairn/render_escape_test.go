package main

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnrun/cairn/checkpoint/conversation"
	"github.com/cairnrun/cairn/host"
)

// hostile is what the reviewer's tool returned: a line erase and a
// carriage return to forge a line, an OSC 52 clipboard write, and a
// right-to-left override.
const hostile = "out\x1b[2K\rFAKE LINE\x1b]52;c;aGVsbG8=\x07 \u202egnp.exe \u009b2J \x7f"

// noControls fails the test if out has a character a terminal may act on,
// other than a newline ending a line or a tab.
func noControls(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if (r != '\n' && r != '\t' && isControl(r)) || (r == utf8.RuneError && !strings.HasPrefix(out[i:], "\ufffd")) {
			t.Errorf("%s has %U at byte %d:\n%q", what, r, i, out)
			return
		}
	}
}

// TestToolOutputEscapedOnTheTerminal: what `cairn run`, `resume`,
// `events` and `chat` print of a tool's input and output, of a model's
// text, of warnings and reasons, for the agent and its sub-agents, gives
// the terminal no commands, and no newline of a tool's forges a line;
// the model's own newlines are kept. `cairn log` and the approve prompt
// show tools' text through oneLine, escaped the same way.
func TestToolOutputEscapedOnTheTerminal(t *testing.T) {
	var out, errOut strings.Builder
	r := newRenderer(&out, &errOut, false)
	call := &host.Call{ID: "call_1_0", Tool: "evil", Input: `{"x":"` + hostile + `"}`, Output: hostile, Outcome: host.OutcomeOK}
	for _, e := range []host.Event{
		{Type: host.EventRunStart, Agent: "a", Run: "r1"},
		{Type: host.EventModelText, Text: "first line\nsecond \x1b]0;title\x07line"},
		{Type: host.EventToolStart, Call: call},
		{Type: host.EventToolEnd, Call: call},
		{Type: host.EventApprovalRequired, Call: call},
		{Type: host.EventEffectsApplied, Call: call, Paths: []string{"e\x1b]0;T\x07\x1b[2Knl\nx.txt"}},
		{Type: host.EventWarning, Text: "tool said " + hostile},
		{Type: host.EventToolEnd, Depth: 1, Agent: "a.sub-1", Call: call},
		{Type: host.EventWarning, Depth: 1, Agent: "a.sub-1", Text: hostile},
		{Type: host.EventRunEnd, Depth: 1, Agent: "a.sub-1", Status: "failed", Reason: hostile},
		{Type: host.EventRunEnd, Status: "failed", Reason: "tool failed: " + hostile},
	} {
		r.event(e)
	}
	noControls(t, "the rendered events", out.String())
	noControls(t, "the rendered warnings", errOut.String())
	if !strings.Contains(out.String(), `✓ evil (0.0 ms) out\x1b[2K FAKE LINE\x1b]52;c;aGVsbG8=\x07 \u202egnp.exe \u009b2J \x7f`+"\n") {
		t.Errorf("the tool's output is not shown escaped:\n%q", out.String())
	}
	if !strings.Contains(out.String(), `failed after 0 rounds · tool failed: out\x1b[2K\x0dFAKE LINE`) {
		t.Errorf("the run's reason is not shown escaped:\n%q", out.String())
	}
	if !strings.Contains(out.String(), "model: first line\nsecond \\x1b]0;title\\x07line\n") {
		t.Errorf("the model's text lost its newline or kept its controls:\n%q", out.String())
	}
	if n := strings.Count(out.String(), "\n"); n != 10 {
		t.Errorf("%d lines for 10 (a tool forged some):\n%q", n, out.String())
	}
	if n := strings.Count(errOut.String(), "\n"); n != 2 {
		t.Errorf("%d lines of warnings for 2:\n%q", n, errOut.String())
	}

	var log strings.Builder
	printMessage(&log, conversation.Message{Role: conversation.RoleTool, CallID: "call_1_0", ToolName: "evil", Text: hostile})
	printMessage(&log, conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "call_1_0", Name: "evil", Input: hostile}}})
	printMessage(&log, conversation.Message{Role: conversation.RoleAssistant, Text: hostile})
	printMessage(&log, conversation.Message{Role: conversation.RoleUser, Text: hostile})
	noControls(t, "cairn log's lines", log.String())
	noControls(t, "an approve prompt's input", oneLine(hostile, 200))
}

// The --json events of `cairn run` and `cairn resume` are JSON, whose
// strings encoding/json escapes of C0 controls but not of DEL, C1 and
// bidirectional controls: those are escaped too, and the JSON still
// decodes to the tool's very output.
func TestRenderJSONEscapesControls(t *testing.T) {
	var out strings.Builder
	r := newRenderer(&out, io.Discard, true)
	r.event(host.Event{Type: host.EventToolEnd, Call: &host.Call{Tool: "evil", Output: hostile, Outcome: host.OutcomeOK}})
	noControls(t, "the JSON event", out.String())
	var e host.Event
	if err := json.Unmarshal([]byte(out.String()), &e); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if e.Call == nil || e.Call.Output != hostile {
		t.Fatalf("decoded output %q, want %q", e.Call.Output, hostile)
	}
}

// TestDiffEscapesPaths: `cairn diff` shows a file a tool named with
// controls and a newline, and a changed line with controls, escaped on
// the lines they belong on, so the tool can neither command the terminal
// nor forge lines of the diff; tabs in a line are kept.
func TestDiffEscapesPaths(t *testing.T) {
	var out strings.Builder
	printChange(&out, host.FileChange{Call: "call_1_0", Op: "create", Path: "e\x1b]0;T\x07\x1b[2Knl\nx.txt", BeforeSize: -1, AfterSize: 24},
		nil, []byte("\tok\nbad\x1b[2K\r+ forged\u202e\n"), false)
	printChange(&out, host.FileChange{Op: "delete", Path: "\u2066old\x9b.txt", BeforeSize: 1, AfterSize: -1}, []byte("x"), nil, false)
	noControls(t, "the diff", out.String())
	want := "create e\\x1b]0;T\\x07\\x1b[2Knl\\x0ax.txt (call_1_0)\n" +
		"  +\tok\n" +
		"  +bad\\x1b[2K\\x0d+ forged\\u202e\n" +
		"delete \\u2066old\\x9b.txt\n" +
		"  -x\n"
	if out.String() != want {
		t.Fatalf("diff:\n%q\nwant:\n%q", out.String(), want)
	}
}

// escapeControls escapes only what a terminal may act on, leaves text
// with none as it is, and escapes nothing of what it wrote.
func TestEscapeControls(t *testing.T) {
	for in, want := range map[string]string{
		"plain · ünïcode ✓ \ufffd": "plain · ünïcode ✓ \ufffd",
		"a\tb\nc":                  `a\x09b\x0ac`,
		"\x00\x1b\x7f":             `\x00\x1b\x7f`,
		"\u0085\u009b":             `\u0085\u009b`,
		"\u200e\u200f\u061c":       `\u200e\u200f\u061c`,
		"\u202a\u202e\u2066\u2069": `\u202a\u202e\u2066\u2069`,
		"bad \xff\xc2 utf-8":       `bad \xff\xc2 utf-8`,
	} {
		got := terminalLine(in)
		if got != want {
			t.Errorf("terminalLine(%q) = %q, want %q", in, got, want)
		}
		if again := terminalLine(got); again != got {
			t.Errorf("escaping %q again gives %q", got, again)
		}
	}
	if got := terminalText("a\tb\nc\r"); got != "a\tb\nc\\x0d" {
		t.Errorf("terminalText kept or escaped the wrong characters: %q", got)
	}
}

// An error that carries what a tool said (a run's reason, a verify
// divergence) reaches stderr escaped, its newlines kept.
func TestErrorsEscapedOnTheTerminal(t *testing.T) {
	var stderr strings.Builder
	if code := exitWith(errors.New("agent a failed: "+hostile+"\n\tsecond line"), &stderr); code != exitFailed {
		t.Fatalf("exit %d", code)
	}
	noControls(t, "the error", strings.ReplaceAll(stderr.String(), "\n\tsecond line", ""))
	if !strings.Contains(stderr.String(), "\n\tsecond line") {
		t.Errorf("the error's own newline and tab are gone: %q", stderr.String())
	}
}
