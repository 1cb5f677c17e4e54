package netguard

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// Regression: a response body past max_response_bytes was said not to
// have been read, though max+1 of its bytes were read and counted as
// received. The error says how much was read and that the tool is not
// given it.
func TestOversizeBodyWordingSaysWhatWasRead(t *testing.T) {
	big := newServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 100)) })
	c := guard(t, Rules{Allow: []string{big.hostPort()}, MaxResponseBytes: 99})
	_, err := c.RoundTrip(context.Background(), get(big.URL))
	if err == nil {
		t.Fatal("oversize body: no error")
	}
	if msg := err.Error(); strings.Contains(msg, "not read") || !strings.Contains(msg, "100 bytes") || !strings.Contains(msg, "max_response_bytes") {
		t.Errorf("oversize body: %v", err)
	}
	if c.Received != 100 {
		t.Errorf("received %d bytes, want 100 (the bytes read)", c.Received)
	}
}
