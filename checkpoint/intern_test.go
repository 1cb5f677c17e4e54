package checkpoint

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

// A long-running agent holds its conversation: the strings that repeat
// from message to message (roles, tool names, a recording's module and
// policy digests, the paths it saw) are one copy each once decoded, from
// a snapshot or from the journal's records, not one a message.
func TestDecodedMessagesShareRepeatedStrings(t *testing.T) {
	rec := func() *conversation.Recording {
		return &conversation.Recording{Module: "sha256:" + string(make([]byte, 64)), Ref: "builtin", Policy: "sha256:policy",
			Files: []conversation.SeenFile{{Path: "dir/f.txt", Digest: "sha256:file"}}, Outside: []string{"env HOME"}}
	}
	msgs := []conversation.Message{
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c1", Name: "read_file", Input: "{}"}}},
		{Role: conversation.RoleTool, CallID: "c1", ToolName: "read_file", Text: "a", Recording: rec()},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c2", Name: "read_file", Input: "{}"}}},
		{Role: conversation.RoleTool, CallID: "c2", ToolName: "read_file", Text: "a", Recording: rec()},
	}
	payload, err := encodeState(&State{Agent: "a", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeState(payload)
	if err != nil {
		t.Fatal(err)
	}
	var fromRecords []conversation.Message
	for _, m := range msgs {
		payload, err := encMode.Marshal(Record{Message: &m})
		if err != nil {
			t.Fatal(err)
		}
		r, err := decodeRecord(RecTurn, payload)
		if err != nil {
			t.Fatal(err)
		}
		fromRecords = append(fromRecords, *r.Message)
	}
	same := func(what, a, b string) {
		t.Helper()
		if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
			t.Errorf("%s: %q and %q are two copies", what, a, b)
		}
	}
	for name, m := range map[string][]conversation.Message{"snapshot": st.Messages, "records": fromRecords} {
		same(name+": role", string(m[1].Role), string(m[3].Role))
		same(name+": tool name", m[1].ToolName, m[3].ToolName)
		same(name+": call's tool name", m[0].ToolCalls[0].Name, m[3].ToolName)
		a, b := m[1].Recording, m[3].Recording
		same(name+": module", a.Module, b.Module)
		same(name+": ref", a.Ref, b.Ref)
		same(name+": policy", a.Policy, b.Policy)
		same(name+": path", a.Files[0].Path, b.Files[0].Path)
		same(name+": digest", a.Files[0].Digest, b.Files[0].Digest)
		same(name+": outside", a.Outside[0], b.Outside[0])
	}
}

// BenchmarkDecodedConversationHeap is the heap a decoded state of 10,000
// rounds of one read_file call each holds, per message: what a resumed
// agent's conversation costs it in memory.
//
//	go test ./checkpoint -run '^$' -bench DecodedConversationHeap -benchtime 5x
func BenchmarkDecodedConversationHeap(b *testing.B) {
	const rounds = 10000
	digest := func(s string) string { return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(s))) }
	st := &State{Agent: "a"}
	for i := range rounds {
		id := fmt.Sprintf("call_%08d", i)
		st.Messages = append(st.Messages,
			conversation.Message{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: id, Name: "read_file", Input: `{"path":"f.txt"}`}}},
			conversation.Message{Role: conversation.RoleTool, CallID: id, ToolName: "read_file", Text: "     1\ta line\n",
				Recording: &conversation.Recording{Round: i + 1, Module: digest("module"), Ref: "builtin", Policy: digest("policy"),
					Files: []conversation.SeenFile{{Path: "f.txt", Size: 7, Digest: digest("a line\n")}}, Output: sha256.Sum256([]byte(id))}})
	}
	payload, err := encodeState(st)
	if err != nil {
		b.Fatal(err)
	}
	var live int64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		st, err := decodeState(payload)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		live += int64(after.HeapAlloc) - int64(before.HeapAlloc)
		runtime.KeepAlive(st)
	}
	b.ReportMetric(float64(live)/float64(b.N)/float64(2*rounds), "heap-B/message")
}
