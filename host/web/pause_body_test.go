package web

import (
	"net/http"
	"strings"
	"testing"
)

// postRaw sends a state change with the token and body as it is.
func (f *fixture) postRaw(path, body string) *http.Response {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.http.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.srv.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Pause reads its body as every state change does: garbage, a field it
// does not read and data after the object are 400, a body over 64 KB is
// 413 (it once never read its body, and paused whatever it was). An empty
// body and {} ask for the pause.
func TestPauseBodyIsChecked(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	for body, status := range map[string]int{
		"garbage":                   http.StatusBadRequest,
		`{"force": true}`:           http.StatusBadRequest,
		`{}{}`:                      http.StatusBadRequest,
		`{} x`:                      http.StatusBadRequest,
		`[]`:                        http.StatusBadRequest,
		`null`:                      http.StatusBadRequest,
		strings.Repeat(" ", 70<<10): http.StatusRequestEntityTooLarge,
		`{"` + strings.Repeat("a", 70<<10) + `": 1}`: http.StatusRequestEntityTooLarge,
		"":   http.StatusConflict, // read, then refused: nothing runs w
		`{}`: http.StatusConflict,
	} {
		resp := f.postRaw("/api/agents/w/pause", body)
		if resp.StatusCode != status {
			t.Errorf("pause with the body %.30q: %s, want %d", body, resp.Status, status)
		}
	}
}

// A body of JSON's null is not an object: 400 on every route that reads
// a body. It was once taken for no body at all.
func TestNullBodyIs400(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.awaiting("ap")
	for _, path := range []string{
		"/api/agents/ap/approvals/call_1_0/approve", "/api/agents/ap/approvals/call_1_0/deny",
		"/api/agents/ap/resume", "/api/agents/ap/pause", "/api/agents/ap/snapshot", "/api/agents/ap/fork",
	} {
		var e apiError
		f.decode(f.postRaw(path, "null"), http.StatusBadRequest, &e)
		if !strings.Contains(e.Error, "not a JSON object") {
			t.Errorf("%s with null: %q, want it to say null is not an object", path, e.Error)
		}
	}
	var pending []any
	f.getJSON("/api/agents/ap/approvals", &pending)
	if len(pending) != 1 {
		t.Fatalf("a request with null changed the agent: %d calls await a decision", len(pending))
	}
}
