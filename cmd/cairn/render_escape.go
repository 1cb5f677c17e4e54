package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text that cairn prints for a person but did not write itself — a tool's
// input, output and errors, a model's text, the names of files a tool
// made — goes through escapeControls first. Printed raw, such text could
// give the terminal commands: erase a line and write a forged one (ESC
// [2K and a carriage return), set the clipboard (OSC 52) or the window's
// title, or reorder what is shown with bidirectional-text controls; and a
// newline in a file name could forge lines of a diff.

// terminalText is text of several lines, as a model writes it: newlines
// and tabs are kept, as they only move the cursor on and down.
func terminalText(s string) string { return escapeControls(s, "\n\t") }

// terminalLine is text that must stay on one line, such as a path or a
// tool's name: a newline in it is escaped too.
func terminalLine(s string) string { return escapeControls(s, "") }

// escapeControls writes each character of s that a terminal could act on
// instead of showing, other than those in keep, as a Go escape: C0
// controls, DEL and bytes that are not UTF-8 as \x1b, C1 controls and
// bidirectional-text controls as \u009b or \u202e. What it writes is all
// printable, so escaping twice changes nothing. It escapes to be safe,
// not to be reversible: a name with a backslash in it reads the same as
// one with the control it spells.
func escapeControls(s, keep string) string {
	var b strings.Builder
	copied := 0 // s[:copied] is in b
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if esc := escaped(r, n, s[i], keep); esc != "" {
			b.WriteString(s[copied:i])
			b.WriteString(esc)
			copied = i + n
		}
		i += n
	}
	if copied == 0 {
		return s // the usual case: nothing escaped, nothing copied
	}
	b.WriteString(s[copied:])
	return b.String()
}

// escaped is how escapeControls writes r, decoded from n bytes starting
// with first: "" to write it as it is.
func escaped(r rune, n int, first byte, keep string) string {
	switch {
	case r == utf8.RuneError && n == 1:
		return fmt.Sprintf(`\x%02x`, first)
	case !isControl(r) || strings.ContainsRune(keep, r):
		return ""
	case r < utf8.RuneSelf:
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// isControl reports whether a terminal may act on r rather than show it:
// a C0 or C1 control, DEL, or a bidirectional-text control (U+200E,
// U+200F, U+202A–U+202E, U+2066–U+2069, U+061C). A byte that is not
// UTF-8 is escaped too (a terminal not reading UTF-8 may take 0x9b for a
// C1 control), by escapeControls, which sees it.
func isControl(r rune) bool {
	return r < 0x20 || r >= 0x7f && (r <= 0x9f || unicode.Is(unicode.Bidi_Control, r))
}

// terminalWriter passes everything written to it through terminalText, so
// that a line printed without a field escaped still gives the terminal no
// commands (a renderer's lines for sub-agents, task lists, compactions).
// It is for writers of text that cairn itself writes no controls to but
// newlines and tabs.
type terminalWriter struct{ w io.Writer }

func (t terminalWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, terminalText(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// jsonControls escapes, in JSON that encoding/json wrote, the characters
// it leaves raw that a terminal may act on: DEL, C1 controls and
// bidirectional-text controls (it escapes C0 controls itself, and writes
// U+FFFD for bytes that are not UTF-8). They occur only inside strings,
// where \u escapes mean the same characters, so the JSON decodes to the
// same values.
func jsonControls(b []byte) []byte {
	if bytes.IndexFunc(b, isJSONControl) < 0 {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b) + 16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if isJSONControl(r) {
			fmt.Fprintf(&out, `\u%04x`, r)
		} else {
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.Bytes()
}

func isJSONControl(r rune) bool { return r >= 0x7f && isControl(r) }

// writeTerminalJSON writes v as one line of JSON, as writeJSON does, with
// jsonControls: for --json output of what tools made, which may be read
// on a terminal too.
func writeTerminalJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", jsonControls(b))
	return err
}
