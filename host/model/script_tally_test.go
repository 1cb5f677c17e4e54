package model

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// fieldsWords is what the script model's input count means: the words of
// every string sent, as strings.Fields splits them.
func fieldsWords(system string, msgs []conversation.Message) int {
	n := len(strings.Fields(system))
	for _, m := range msgs {
		n += len(strings.Fields(m.Text))
		for _, c := range m.ToolCalls {
			n += len(strings.Fields(c.Input))
		}
	}
	return n
}

func assistantsIn(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == conversation.RoleAssistant {
			n++
		}
	}
	return n
}

func conversationOf(n int) []conversation.Message {
	msgs := []conversation.Message{{Role: conversation.RoleUser, Text: "read the notes and count the words"}}
	for i := 1; len(msgs) < n; i++ {
		msgs = append(msgs,
			conversation.Message{Role: conversation.RoleAssistant, Text: fmt.Sprintf("round %d: reading", i),
				ToolCalls: []conversation.ToolCall{{ID: fmt.Sprint(i), Name: "read_file", Input: `{"path": "notes.md"}`}}},
			conversation.Message{Role: conversation.RoleTool, Text: "1\tline one\n2\tline\u00a0two\u2003three", CallID: fmt.Sprint(i)})
	}
	return msgs[:n]
}

// TestTallyCountsWhatIsSent holds the tally to the plain count through the
// ways a conversation changes between requests: it grows, a resume sends
// fresh copies of every string, a replay drops its last round, a message's
// text is replaced in a new array, and a conversation cut back grows again
// in the same array with other messages.
func TestTallyCountsWhatIsSent(t *testing.T) {
	var tl tally
	msgs := conversationOf(40)
	check := func(what string, system string, msgs []conversation.Message) {
		t.Helper()
		got, assistants := tl.count(system, msgs)
		if want := fieldsWords(system, msgs); got != want {
			t.Fatalf("%s: tally counted %d words, want %d", what, got, want)
		}
		if want := assistantsIn(msgs); assistants != want {
			t.Fatalf("%s: tally counted %d assistant messages, want %d", what, assistants, want)
		}
	}
	for n := 1; n <= len(msgs); n++ {
		check(fmt.Sprintf("first %d messages", n), "be brief", msgs[:n])
	}
	check("another system prompt", "be very brief", msgs)
	copied := make([]conversation.Message, len(msgs))
	for i, m := range msgs {
		m.Text = strings.Clone(m.Text)
		copied[i] = m
	}
	check("every text copied", "be brief", copied)
	check("last round dropped", "be brief", copied[:31])
	replaced := slices.Clone(copied)
	replaced[10].Text = "now five words are here"
	check("a text replaced", "be brief", replaced)
	grow := make([]conversation.Message, 0, len(msgs))
	for _, m := range msgs {
		grow = append(grow, m)
		check(fmt.Sprintf("grown in place to %d", len(grow)), "be brief", grow)
	}
	grow = grow[:20]
	check("cut back in place", "be brief", grow)
	grow = grow[:10]
	grow = append(grow, conversationOf(25)[10:]...)
	grow[12].Text, grow[19].Text = "other words", "and more other words here"
	check("cut and grown again in place", "be brief", grow)
	check("empty", "", nil)
}

func TestCountWordsIsFields(t *testing.T) {
	for _, s := range []string{"", " ", "a", " a  b ", "a\u00a0b", "a\u2003b\u3000c", "\xff \xfe", "x\u0085y", "tab\tnl\nvt\vff\fcr\r"} {
		if got, want := countWords(s), len(strings.Fields(s)); got != want {
			t.Errorf("countWords(%q) = %d, strings.Fields gives %d", s, got, want)
		}
	}
}

func FuzzCountWords(f *testing.F) {
	f.Add("a b\u00a0c \xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := countWords(s), len(strings.Fields(s)); got != want {
			t.Fatalf("countWords(%q) = %d, strings.Fields gives %d", s, got, want)
		}
	})
}

// BenchmarkScriptUsage times the input count of one request at a history
// of 10 to 10,000 messages: "fields" counts every string afresh, as the
// script model once did; "tally" is how it counts a request whose earlier
// messages it has counted before, in the same array (as a run sends them
// round after round); "tally-moved", the same messages in another array
// each time, which it walks comparing strings.
func BenchmarkScriptUsage(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		msgs := conversationOf(n)
		b.Run(fmt.Sprintf("fields/%d", n), func(b *testing.B) {
			for b.Loop() {
				fieldsWords("be brief", msgs)
			}
		})
		b.Run(fmt.Sprintf("tally/%d", n), func(b *testing.B) {
			var tl tally
			tl.words("be brief", msgs[:n-2])
			for b.Loop() {
				tl.words("be brief", msgs)
			}
		})
		b.Run(fmt.Sprintf("tally-moved/%d", n), func(b *testing.B) {
			var tl tally
			arrays := [2][]conversation.Message{slices.Clone(msgs), slices.Clone(msgs)}
			i := 0
			for b.Loop() {
				tl.words("be brief", arrays[i%2])
				i++
			}
		})
	}
}
