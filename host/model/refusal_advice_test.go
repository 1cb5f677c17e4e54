package model

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Regression: a 401 said only "HTTP 401: …", with no next step. A refusal
// of the key names the variable the key is read from and whether it was
// set; a 404 names the address requests go to and the model's name.
func TestRefusalAdvice(t *testing.T) {
	keyEnv := map[string]string{"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
	for _, fl := range flavours {
		tests := []struct {
			name, key string
			code      int
			says      []string
		}{
			{"401 without a key", "", 401, []string{"HTTP 401", "no key was sent: " + keyEnv[fl.name] + " is not set", "model.api_key_env"}},
			{"403 with a key", "sk-test-1234567890", 403, []string{"HTTP 403", "the value of " + keyEnv[fl.name], "valid key"}},
			{"404", "sk-test-1234567890", 404, []string{"HTTP 404", "model.base_url", "model.name"}},
		}
		for _, tt := range tests {
			t.Run(fl.name+"/"+tt.name, func(t *testing.T) {
				t.Setenv(keyEnv[fl.name], tt.key)
				srv := serve(t, status(tt.code, fl.errBody))
				p, rp := fl.open(srv.URL)
				fastRetries(rp, 2)
				_, err := p.Complete(context.Background(), hello)
				if !errors.Is(err, ErrRequest) {
					t.Fatalf("err %v, want ErrRequest", err)
				}
				says := tt.says
				if tt.key != "" {
					says = append(says, srv.URL)
				}
				for _, s := range says {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				if tt.key != "" && strings.Contains(err.Error(), tt.key) {
					t.Errorf("error %q shows the key", err)
				}
			})
		}
	}
}
