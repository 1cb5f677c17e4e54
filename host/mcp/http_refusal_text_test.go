package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// withHeaders sends each request with its headers, and Host for its
// Host if given.
type withHeaders map[string]string

func (h withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Regression: a request refused for its token, its Origin or its Host
// was answered in plain text, of which the Go SDK's client shows the
// status alone: a user with a wrong token read `sending "initialize":
// Unauthorized`, and nothing of what to send. Each refusal is a JSON-RPC
// error to the request, with its status, and the client shows why.
func TestHTTPRefusalsReachTheClient(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler("sekrit"))
	t.Cleanup(hs.Close)
	for _, c := range []struct {
		name    string
		headers withHeaders
		says    string
	}{
		{"no token", withHeaders{}, `send the header "Authorization: Bearer TOKEN"`},
		{"wrong token", withHeaders{"Authorization": "Bearer wrong"}, `send the header "Authorization: Bearer TOKEN"`},
		{"foreign Origin", withHeaders{"Authorization": "Bearer sekrit", "Origin": "http://evil.example"}, `Origin "http://evil.example" is not this server's`},
		{"foreign Host", withHeaders{"Authorization": "Bearer sekrit", "Host": "evil.example"}, `Host "evil.example" is not a loopback name`},
	} {
		_, err := sdk.NewClient(&sdk.Implementation{Name: "http", Version: "1"}, nil).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: hs.URL, MaxRetries: -1, HTTPClient: &http.Client{Transport: c.headers}}, nil)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want it to say %q", c.name, err, c.says)
		}
	}
}
