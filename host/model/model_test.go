package model

import (
	"reflect"
	"testing"
	"time"
)

func TestParseModelFlag(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		ok   bool
	}{
		{"openai:gpt-4o-mini", Spec{Provider: "openai", Name: "gpt-4o-mini"}, true},
		{"openai:llama3.2:3b", Spec{Provider: "openai", Name: "llama3.2:3b"}, true},
		{"anthropic:claude-sonnet-4-5", Spec{Provider: "anthropic", Name: "claude-sonnet-4-5"}, true},
		{"script:turns.yaml", Spec{Provider: "script", Script: "turns.yaml"}, true},
		{"gemini:pro", Spec{}, false},
		{"openai", Spec{}, false},
		{"openai:", Spec{}, false},
	}
	for _, tt := range tests {
		got, err := ParseModelFlag(tt.in)
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseModelFlag(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

func TestOpen(t *testing.T) {
	for _, tt := range []struct {
		spec Spec
		want any
	}{
		{Spec{Provider: "openai", Name: "m"}, &OpenAI{}},
		{Spec{Provider: "anthropic", Name: "m"}, &Anthropic{}},
		{Spec{Provider: "script", ScriptData: []byte("turns: []")}, &Script{}},
	} {
		p, err := Open(tt.spec)
		if err != nil || reflect.TypeOf(p) != reflect.TypeOf(tt.want) {
			t.Errorf("Open(%s) = %T, %v", tt.spec.Provider, p, err)
		}
	}
	if _, err := Open(Spec{Provider: "nope"}); err == nil {
		t.Error("Open of an unknown provider succeeded")
	}
}

func TestOverride(t *testing.T) {
	price := &Price{Input: 1}
	file := Spec{Provider: "openai", Name: "a", BaseURL: "http://localhost:11434/v1", APIKeyEnv: "K", MaxRetries: 2, MaxTokens: 100,
		Timeout: time.Hour, Price: price}
	tests := []struct {
		name string
		o    Spec
		want Spec
	}{
		{"same provider, same model", Spec{Provider: "openai", Name: "a"}, file},
		{"same provider, other model", Spec{Provider: "openai", Name: "b"},
			Spec{Provider: "openai", Name: "b", BaseURL: file.BaseURL, APIKeyEnv: "K", MaxRetries: 2, MaxTokens: 100, Timeout: time.Hour}},
		{"other provider", Spec{Provider: "anthropic", Name: "c"}, Spec{Provider: "anthropic", Name: "c"}},
	}
	for _, tt := range tests {
		if got := file.Override(tt.o); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
