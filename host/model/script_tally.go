package model

import (
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// tally counts the words of the conversations a script is sent, and their
// assistant messages, in time that grows with what a request adds, not
// with the whole history.
//
// A run sends the same conversation again each round with one round more,
// in the very array its state keeps (the state only ever appends to it):
// a request whose messages start at the same address as the last one's,
// and are at least as many, holds the last request's messages and new ones
// after them. Only the new ones are counted, once the last message counted
// is checked to be still the one counted (a conversation cut back and
// grown again in the same array fails that check).
//
// Any other request is walked message by message, comparing strings: Go
// strings are immutable, so a string at the same address with the same
// length has the same words. tally keeps the address and length of every
// string it counted, in conversation order, beside the running total; the
// walk compares keys, which costs a few nanoseconds a message, and counts
// only strings past the first mismatch. The walk happens when the array
// moved, which an append that outgrows it does at doubling sizes, so it
// too costs O(1) a round, amortised. Holding the addresses keeps those
// strings alive, which the agent's state does anyway.
//
// A tally is safe for concurrent use.
type tally struct {
	mu    sync.Mutex
	keys  []strKey // every string counted, in conversation order
	total []int    // total[i] is the words of keys[:i+1]
	// base is the address of the last request's first message, msgs how
	// many messages it had, assistants how many of them were the model's,
	// and lastKeys where the last message's strings start in keys.
	base       *conversation.Message
	msgs       int
	assistants int
	lastKeys   int
	// toolsBase and toolsLen are the last request's tools, toolWords their
	// words: a run offers the same tools, in the same array, every round.
	toolsBase *Tool
	toolsLen  int
	toolWords int
}

type strKey struct {
	p *byte
	n int
}

func keyOf(s string) strKey { return strKey{unsafe.StringData(s), len(s)} }

// words returns the words of the system prompt and of every message's text
// and call inputs, as len(strings.Fields) of each would add up to.
func (t *tally) words(system string, msgs []conversation.Message) int {
	n, _ := t.count(system, msgs)
	return n
}

// count returns what words does, and how many of msgs are the model's.
func (t *tally) count(system string, msgs []conversation.Message) (words, assistants int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := walk{t: t}
	from := 0
	if t.grown(system, msgs) {
		from, w.i, w.sum, w.assistants = t.msgs, len(t.keys), t.total[len(t.total)-1], t.assistants
	} else {
		w.add(system)
	}
	for i := from; i < len(msgs); i++ {
		if i == len(msgs)-1 {
			t.lastKeys = w.i
		}
		w.message(&msgs[i])
	}
	w.cut()
	t.base, t.msgs, t.assistants = nil, len(msgs), w.assistants
	if len(msgs) > 0 {
		t.base = &msgs[0]
	}
	return w.sum, w.assistants
}

// tools returns the words of the tools' names, descriptions and input
// schemas, counted again only when they are not the last request's array.
// A request's tools are read only, as its messages are.
func (t *tally) tools(tools []Tool) int {
	if len(tools) == 0 {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if &tools[0] != t.toolsBase || len(tools) != t.toolsLen {
		t.toolsBase, t.toolsLen, t.toolWords = &tools[0], len(tools), toolWords(tools)
	}
	return t.toolWords
}

// toolWords is the words of the tools' names, descriptions and input
// schemas.
func toolWords(tools []Tool) int {
	n := 0
	for _, tl := range tools {
		n += countWords(tl.Name) + countWords(tl.Description) + countWords(string(tl.InputSchema))
	}
	return n
}

// grown says whether msgs are the last request's messages, in the same
// array, and maybe more after them (see tally).
func (t *tally) grown(system string, msgs []conversation.Message) bool {
	if t.msgs == 0 || len(msgs) < t.msgs || &msgs[0] != t.base || t.keys[0] != keyOf(system) {
		return false
	}
	last, i := &msgs[t.msgs-1], t.lastKeys
	if i >= len(t.keys) || t.keys[i] != keyOf(last.Text) || len(t.keys)-i != 1+len(last.ToolCalls) {
		return false
	}
	for j := range last.ToolCalls {
		if t.keys[i+1+j] != keyOf(last.ToolCalls[j].Input) {
			return false
		}
	}
	return true
}

// walk is one request's pass over a tally: i strings seen so far, all of
// them matching the tally's keys while diverged is false.
type walk struct {
	t                  *tally
	i, sum, assistants int
	diverged           bool
}

func (w *walk) message(m *conversation.Message) {
	if m.Role == conversation.RoleAssistant {
		w.assistants++
	}
	w.add(m.Text)
	for j := range m.ToolCalls {
		w.add(m.ToolCalls[j].Input)
	}
}

func (w *walk) add(s string) {
	t, k := w.t, keyOf(s)
	if !w.diverged && w.i < len(t.keys) && t.keys[w.i] == k {
		w.sum = t.total[w.i]
		w.i++
		return
	}
	w.cut()
	w.sum += countWords(s)
	t.keys, t.total = append(t.keys, k), append(t.total, w.sum)
	w.i++
}

// cut forgets the keys past the strings seen so far, once: what follows
// them is counted anew, or the request ended there.
func (w *walk) cut() {
	if w.diverged {
		return
	}
	t := w.t
	clear(t.keys[w.i:]) // let go of the strings no longer counted
	t.keys, t.total = t.keys[:w.i], t.total[:w.i]
	w.diverged = true
}

// asciiSpace holds the ASCII bytes unicode.IsSpace reports.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// countWords is len(strings.Fields(s)) without making the slice.
func countWords(s string) int {
	n, inWord := 0, false
	for i := 0; i < len(s); {
		space, size := false, 1
		if c := s[i]; c < utf8.RuneSelf {
			space = asciiSpace[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		if !space && !inWord {
			n++
		}
		inWord = !space
		i += size
	}
	return n
}
