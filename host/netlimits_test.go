package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnrun/cairn/sandbox/netguard"
)

// Regression: `net: {max_requests: -3}` in an agent file was taken as the
// default of 20, silently, while `timeout: -5s` was refused. The agent
// does not start, and the error names the field.
func TestNetNegativeMaxRequestsRefused(t *testing.T) {
	af := netAgent(t, `{net: {allow: ["127.0.0.1:9"], max_requests: -3}}`, `{url: "http://127.0.0.1:9/"}`)
	_, err := testEngine.Run(context.Background(), RunOptions{Agent: af, Prompt: "go"})
	if !errors.Is(err, netguard.ErrBadRule) || !strings.Contains(err.Error(), "max_requests") || !strings.Contains(err.Error(), "negative") {
		t.Fatalf("got %v", err)
	}
	if _, err := (NetGrant{Allow: []string{"*"}, MaxRequests: -3}).Net(); !errors.Is(err, netguard.ErrBadRule) {
		t.Fatalf("cairn exec's grant: %v", err)
	}
}
