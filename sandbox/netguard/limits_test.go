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
