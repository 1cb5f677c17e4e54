package model

import (
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/cairnrun/cairn/checkpoint"
)

// tally counts the words of the conversations a script is sent, in time
// that grows with what a request adds, not with the whole history.
//
// A run sends the same conversation again each round with one round more:
// the strings of the earlier messages are the very same strings, shared
// with the agent's state. Go strings are immutable, so a string at the same
// address with the same length has the same words. tally keeps the
// address and length of every string it counted, in conversation order,
// beside the running total; a request is walked comparing keys, which costs
// a few nanoseconds a message, and only strings past the first mismatch are
// counted. Holding the addresses keeps those strings alive, which the
// agent's state does anyway.
//
// A tally is safe for concurrent use.
type tally struct {
	mu    sync.Mutex
	keys  []strKey // every string counted, in conversation order
	total []int    // total[i] is the words of keys[:i+1]
}

type strKey struct {
	p *byte
	n int
}

func keyOf(s string) strKey { return strKey{unsafe.StringData(s), len(s)} }

// words returns the words of the system prompt and of every message's text
// and call inputs, as len(strings.Fields) of each would add up to.
func (t *tally) words(system string, msgs []checkpoint.Message) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := walk{t: t}
	w.add(system)
	for i := range msgs {
		w.add(msgs[i].Text)
		for j := range msgs[i].ToolCalls {
			w.add(msgs[i].ToolCalls[j].Input)
		}
	}
	return w.sum
}

// walk is one request's pass over a tally: i strings seen so far, all of
// them matching the tally's keys while diverged is false.
type walk struct {
	t        *tally
	i, sum   int
	diverged bool
}

func (w *walk) add(s string) {
	t, k := w.t, keyOf(s)
	if !w.diverged && w.i < len(t.keys) && t.keys[w.i] == k {
		w.sum = t.total[w.i]
		w.i++
		return
	}
	if !w.diverged {
		clear(t.keys[w.i:]) // let go of the strings no longer counted
		t.keys, t.total = t.keys[:w.i], t.total[:w.i]
		w.diverged = true
	}
	w.sum += countWords(s)
	t.keys, t.total = append(t.keys, k), append(t.total, w.sum)
	w.i++
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
