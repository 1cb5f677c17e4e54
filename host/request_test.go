package host

import (
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint/conversation"

	"github.com/cairnrun/cairn/checkpoint"
)

// A round with nothing pending sends the state's own messages, not a copy,
// and nothing appended to what it sends reaches the state; a round with a
// pending prompt sends the state's messages and the prompt after them.
func TestRequestSharesTheStatesMessages(t *testing.T) {
	st := checkpoint.NewState("a", checkpoint.Definition{}, checkpoint.Labels{}, time.Now())
	st.Messages = make([]conversation.Message, 2, 8)
	st.Messages[0] = conversation.Message{Role: conversation.RoleUser, Text: "go"}
	st.Messages[1] = conversation.Message{Role: conversation.RoleAssistant, Text: "ok"}
	log, err := checkpoint.NewMemStore().Create("a", st)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{log: &heldLog{Log: log}}
	state := r.state().Messages

	msgs := r.requestMessages()
	if len(msgs) != 2 || &msgs[0] != &state[0] {
		t.Fatalf("a round with nothing pending sent %d messages, a copy: %v", len(msgs), &msgs[0] != &state[0])
	}
	_ = append(msgs, conversation.Message{Role: conversation.RoleUser, Text: "appended"})
	if got := state[:3][2].Text; got == "appended" {
		t.Fatal("a message appended to the request reached the state's array")
	}

	r.pending = []conversation.Message{{Role: conversation.RoleUser, Text: "next"}}
	msgs = r.requestMessages()
	if len(msgs) != 3 || msgs[2].Text != "next" || msgs[0].Text != "go" {
		t.Fatalf("a round with a pending prompt sent %+v", msgs)
	}
	if got := state[:3][2].Text; got == "next" {
		t.Fatal("the pending prompt was written into the state's array")
	}
}
