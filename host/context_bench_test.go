package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
	"github.com/cairnrun/cairn/host/model"
)

// BenchmarkContextRound times what a round costs the window under a
// context budget (adding the round's messages and building the request),
// on a history of 10, 1,000 and 10,000 messages cut to its last 40: the
// figure is the same for each, since a round costs what it adds.
func BenchmarkContextRound(b *testing.B) {
	result := strings.Repeat("a line of the notes the agent reads again and again\n", 6)
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			st := &checkpoint.State{Messages: []conversation.Message{{Role: conversation.RoleUser, Text: contextPrompt}}}
			addRound := func(i int) {
				id := fmt.Sprintf("call_%d_0", i)
				st.Messages = append(st.Messages,
					conversation.Message{Role: conversation.RoleAssistant, Text: fmt.Sprintf("step %d", i),
						ToolCalls: []conversation.ToolCall{{ID: id, Name: "read_file", Input: `{"path":"notes.txt"}`}}},
					conversation.Message{Role: conversation.RoleTool, CallID: id, ToolName: "read_file", Text: result})
			}
			for i := 1; len(st.Messages) < n; i++ {
				addRound(i)
			}
			from := max(len(st.Messages)-40, 1)
			for from > 1 && st.Messages[from].Role != conversation.RoleAssistant {
				from--
			}
			if from > 1 {
				st.Compactions = []checkpoint.Compaction{{From: from, Pinned: 0, Policy: "summarize", Summary: "read the notes", Turns: from / 2}}
			}
			w, err := newWindow(ContextSpec{Budget: 1 << 30}, "system", []model.Tool{{Name: "read_file"}}, st)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				addRound(n + i)
				w.sync(st)
				if _, tokens := w.request(nil); tokens <= 0 {
					b.Fatal("no tokens")
				}
			}
		})
	}
}
