package netguard

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Regression: a negative limit (net: {max_requests: -3}) was taken as
// the default, silently, where a negative timeout in the agent file was
// refused. A negative limit is refused, naming its field.
func TestNegativeLimitRefused(t *testing.T) {
	for field, r := range map[string]Rules{
		"max_requests":       {MaxRequests: -3},
		"max_request_bytes":  {MaxRequestBytes: -1},
		"max_response_bytes": {MaxResponseBytes: -1},
		"timeout":            {Timeout: -5 * time.Second},
	} {
		r.Allow = []string{"*"}
		_, err := New(r)
		if !errors.Is(err, ErrBadRule) || !strings.Contains(err.Error(), "net: {"+field+"}") || !strings.Contains(err.Error(), "negative") {
			t.Errorf("%s: %v", field, err)
		}
	}
}

// A secret whose value holds a control character, or whose header name
// is not a token, is refused when the grant is read: net/http would
// refuse every request that carried it.
func TestSecretNetHTTPWouldRefuseIsABadRule(t *testing.T) {
	for name, s := range map[string]Secret{
		"newline": {Host: "api.example.com", Header: "Authorization", Value: "Bearer s3cr\n"},
		"NUL":     {Host: "api.example.com", Header: "X-Key", Value: "k\x00"},
		"name":    {Host: "api.example.com", Header: "X Key", Value: "k"},
	} {
		_, err := New(Rules{Allow: []string{"api.example.com"}, Secrets: []Secret{s}})
		if !errors.Is(err, ErrBadRule) || strings.Contains(err.Error(), "s3cr") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
