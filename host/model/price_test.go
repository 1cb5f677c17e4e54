package model

import (
	"testing"

	"github.com/cairnrun/cairn/checkpoint/conversation"
)

func TestCost(t *testing.T) {
	tests := []struct {
		name  string
		price *Price
		usage conversation.Usage
		want  int64
	}{
		{"no price", nil, conversation.Usage{InputTokens: 1000, OutputTokens: 1000}, 0},
		{"plain", &Price{Input: 0.15, Output: 0.60}, conversation.Usage{InputTokens: 1_000_000, OutputTokens: 1000}, 150_600},
		{"cache priced", &Price{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
			conversation.Usage{InputTokens: 1100, CacheReadTokens: 1000, CacheWriteTokens: 100}, 300 + 375},
		{"cache unpriced costs as input", &Price{Input: 2}, conversation.Usage{InputTokens: 10, CacheReadTokens: 10}, 20},
		{"rounded", &Price{Input: 0.15}, conversation.Usage{InputTokens: 3}, 0},
	}
	for _, tt := range tests {
		if got := tt.price.Cost(tt.usage); got != tt.want {
			t.Errorf("%s: %d µ$, want %d", tt.name, got, tt.want)
		}
	}
}
