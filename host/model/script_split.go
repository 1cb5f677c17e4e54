package model

import "bytes"

// A long script is not parsed whole when it is opened: a run resumed at
// turn 5,000 plays a few turns, and parsing 5,000 costs far more than
// they do. splitTurns finds where each turn of the script starts and
// ends by looking at the lines' indentation, and each turn is parsed when
// it is first played (lazyTurn). It accepts only the layout it can split
// without the YAML parser's help, in which a turn is the block sequence
// item it seems to be:
//
//	turns:            # at column 0, once
//	  - text: ...     # each turn "- " and a key, at the first turn's indentation
//	    tool_calls: [...]
//	summary: ...      # any other key at column 0
//
// Anything it cannot be sure of (document markers, directives, tabs in
// indentation, anchors, aliases, tags, a quoted scalar or a flow
// collection still open where a turn seems to end) leaves the script to be
// parsed whole, as is a script of no more than lazyTurns turns.
const lazyTurns = 100

// span is one turn's bytes in the script, and the line it starts on.
type span struct {
	start, end int
	line       int
}

// scriptLayout is a script split into its turns and the rest: the
// document without the turns' lines, to be parsed as it is.
type scriptLayout struct {
	turns []span
	rest  []byte
}

// splitTurns splits data as the comment above says; false when it cannot.
func splitTurns(data []byte) (scriptLayout, bool) {
	lines := splitLines(data)
	key := -1
	for i, l := range lines {
		text := data[l.start:l.end]
		if bytes.HasPrefix(text, []byte("%")) || bytes.HasPrefix(text, []byte("---")) ||
			bytes.HasPrefix(text, []byte("...")) || bytes.ContainsRune(indentOf(text), '\t') || bytes.HasPrefix(text, []byte("\xef\xbb\xbf")) {
			return scriptLayout{}, false
		}
		if isKey(text, "turns") {
			if key >= 0 {
				return scriptLayout{}, false
			}
			key = i
		}
	}
	if key < 0 || !cleanBefore(data, lines[:key]) {
		return scriptLayout{}, false
	}
	turns, end, ok := splitItems(data, lines, key+1)
	if !ok {
		return scriptLayout{}, false
	}
	rest := append([]byte(nil), data[:lines[key].next]...)
	return scriptLayout{turns: turns, rest: append(rest, data[lines[end-1].next:]...)}, true
}

// cleanBefore reports whether the lines before "turns:" leave no quoted
// scalar or flow collection open, which would hold the key's line.
func cleanBefore(data []byte, lines []line) bool {
	var sc scanner
	for _, l := range lines {
		if !sc.line(data[l.start:l.end]) {
			return false
		}
	}
	return sc.clean()
}

// splitItems splits the block sequence whose items start at lines[from],
// and returns them and the index of the line after the sequence.
func splitItems(data []byte, lines []line, from int) ([]span, int, bool) {
	var items []span
	var sc scanner
	d := -1
	i := from
	for ; i < len(lines); i++ {
		text := data[lines[i].start:lines[i].end]
		trimmed := bytes.TrimLeft(text, " ")
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		ind := len(text) - len(trimmed)
		if d < 0 {
			d = ind
		}
		item := ind == d && bytes.HasPrefix(trimmed, []byte("- "))
		if item && !isMapping(trimmed[2:]) {
			return nil, 0, false // a turn that may be null, which the YAML decoder would leave out
		}
		if item || ind <= d {
			if !sc.clean() {
				return nil, 0, false
			}
			if len(items) > 0 {
				items[len(items)-1].end = lines[i].start
			}
		}
		if !item && ind <= d {
			if ind != 0 || len(items) == 0 {
				return nil, 0, false
			}
			break
		}
		if item {
			items = append(items, span{start: lines[i].start, line: i + 1})
		}
		if !sc.line(text) {
			return nil, 0, false
		}
	}
	if len(items) == 0 || !sc.clean() {
		return nil, 0, false
	}
	if i == len(lines) {
		items[len(items)-1].end = len(data)
	}
	// The blank and comment lines before the line after the sequence
	// stay in the last turn, which is no harm.
	return items, i, true
}

// isMapping reports whether an item's first line begins a mapping: a
// flow mapping, or a key of letters and underscores followed by ':'.
func isMapping(b []byte) bool {
	b = bytes.TrimLeft(b, " ")
	if len(b) > 0 && b[0] == '{' {
		return true
	}
	i := 0
	for i < len(b) && (b[i] == '_' || b[i] >= 'a' && b[i] <= 'z' || b[i] >= 'A' && b[i] <= 'Z') {
		i++
	}
	return i > 0 && i < len(b) && b[i] == ':' && (i+1 == len(b) || b[i+1] == ' ')
}

// line is one line of the script: its text from start to end, without
// the line break, and where the next line starts.
type line struct{ start, end, next int }

func splitLines(data []byte) []line {
	var out []line
	for start := 0; start < len(data); {
		end := bytes.IndexByte(data[start:], '\n')
		next := start + end + 1
		if end < 0 {
			end, next = len(data)-start, len(data)
		}
		l := line{start: start, end: start + end, next: next}
		if l.end > l.start && data[l.end-1] == '\r' {
			l.end--
		}
		out = append(out, l)
		start = next
	}
	return out
}

func indentOf(text []byte) []byte {
	return text[:len(text)-len(bytes.TrimLeft(text, " \t"))]
}

// isKey reports whether the line is "name:" at column 0 with nothing after
// it but spaces and a comment.
func isKey(text []byte, name string) bool {
	rest, ok := bytes.CutPrefix(text, []byte(name+":"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) == 0 || rest[0] == '#' && len(rest) < len(text)-len(name)-1
}

// scanner follows, line by line, what of the YAML syntax can span lines:
// quoted scalars and flow collections. It does not parse: where it is
// unsure it refuses (line returns false), and the script is parsed whole.
type scanner struct {
	dq, sq bool // in a double- or single-quoted scalar
	depth  int  // of flow collections
}

func (s *scanner) clean() bool { return !s.dq && !s.sq && s.depth == 0 }

// line scans one line. A quote opens a scalar only where a node starts:
// at the line's start, after "- ", after a ':' ending a key, and after
// '[', '{' and ',' in a flow collection.
func (s *scanner) line(b []byte) bool {
	start := true
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case s.dq:
			if c == '\\' {
				i++
			} else if c == '"' {
				s.dq = false
			}
			continue
		case s.sq:
			if c == '\'' && i+1 < len(b) && b[i+1] == '\'' {
				i++
			} else if c == '\'' {
				s.sq = false
			}
			continue
		case c == ' ':
			continue
		case c == '#' && (i == 0 || b[i-1] == ' '):
			return true
		}
		if start {
			switch c {
			case '"':
				s.dq, start = true, false
				continue
			case '\'':
				s.sq, start = true, false
				continue
			case '&', '*', '!', '?', '@', '`', '%':
				return false
			case '-':
				if i+1 == len(b) || b[i+1] == ' ' {
					continue
				}
			}
		}
		wasStart := start
		start = false
		switch c {
		case '[', '{':
			if s.depth > 0 || wasStart {
				s.depth++
				start = true
			}
		case ']', '}':
			if s.depth > 0 {
				s.depth--
			}
		case ',':
			start = s.depth > 0
		case ':':
			start = s.depth > 0 || i+1 == len(b) || b[i+1] == ' '
		}
	}
	return true
}
