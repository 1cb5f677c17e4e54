package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The conversation of an agent that has committed no round — its first
// round awaits a decision — is an empty list, [], as the doc's shape
// says; it was once null.
func TestConversationOfNoRoundIsEmptyList(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	resp := f.do("/api/agents/ap/conversation", nil, "")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != "[]" {
		t.Fatalf("conversation of an agent with no round: %s %s, want 200 []", resp.Status, b)
	}
}
