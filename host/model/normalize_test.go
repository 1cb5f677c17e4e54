package model

import (
	"reflect"
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

func TestNormalize(t *testing.T) {
	user := func(s string) conversation.Message { return conversation.Message{Role: conversation.RoleUser, Text: s} }
	asst := func(ids ...string) conversation.Message {
		m := conversation.Message{Role: conversation.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, conversation.ToolCall{ID: id, Name: "t" + id})
		}
		return m
	}
	res := func(id, text string) conversation.Message {
		return conversation.Message{Role: conversation.RoleTool, CallID: id, ToolName: "t" + id, Text: text}
	}
	notRun := func(id string) conversation.Message {
		return conversation.Message{Role: conversation.RoleTool, CallID: id, ToolName: "t" + id, Text: NotRunResult, IsError: true}
	}
	tests := []struct {
		name    string
		in, out []conversation.Message
	}{
		{"whole", []conversation.Message{user("u"), asst("1"), res("1", "r")}, []conversation.Message{user("u"), asst("1"), res("1", "r")}},
		{"missing result", []conversation.Message{user("u"), asst("1", "2"), res("1", "r")},
			[]conversation.Message{user("u"), asst("1", "2"), res("1", "r"), notRun("2")}},
		{"last turn with no results", []conversation.Message{user("u"), asst("1")}, []conversation.Message{user("u"), asst("1"), notRun("1")}},
		{"duplicate result", []conversation.Message{asst("1"), res("1", "a"), res("1", "b")}, []conversation.Message{asst("1"), res("1", "a")}},
		{"orphan result", []conversation.Message{asst("1"), res("1", "a"), res("9", "x")}, []conversation.Message{asst("1"), res("1", "a")}},
		{"result before any call", []conversation.Message{res("1", "x"), user("u")}, []conversation.Message{user("u")}},
		{"results in call order", []conversation.Message{asst("1", "2"), res("2", "b"), res("1", "a")},
			[]conversation.Message{asst("1", "2"), res("1", "a"), res("2", "b")}},
		{"a user message among the results", []conversation.Message{asst("1", "2"), res("1", "a"), user("files changed"), res("2", "b")},
			[]conversation.Message{asst("1", "2"), res("1", "a"), res("2", "b"), user("files changed")}},
		{"a result of an older round", []conversation.Message{asst("1"), asst("2"), res("1", "late"), res("2", "b")},
			[]conversation.Message{asst("1"), notRun("1"), asst("2"), res("2", "b")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Normalize(tt.in); !reflect.DeepEqual(got, tt.out) {
				t.Errorf("got  %+v\nwant %+v", got, tt.out)
			}
		})
	}
}

func TestWireInput(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{` {} `, `{}`},
		{``, `{}`},
		{`{"a": `, `{"_raw_arguments":"{\"a\": "}`},
		{`[1,2]`, `{"_raw_arguments":"[1,2]"}`},
		{`null`, `{"_raw_arguments":"null"}`},
		{`"s"`, `{"_raw_arguments":"\"s\""}`},
	}
	for _, tt := range tests {
		if got := string(wireInput(tt.in)); got != tt.want {
			t.Errorf("wireInput(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
