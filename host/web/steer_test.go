package web

import (
	"net/http"
	"strings"
	"testing"
)

// Resuming an agent whose last run ended cleanly is refused with 409 and
// the reason, as `cairn resume` says there is nothing to resume: no 202
// with a run that never exists.
func TestResumeWithNothingToResumeIsConflict(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	for range 5 { // the answer once depended on a random pick
		var e apiError
		f.decode(f.post("/api/agents/w/resume", struct{}{}), http.StatusConflict, &e)
		if !strings.Contains(e.Error, "nothing to resume") {
			t.Fatalf("resume of a done agent: %q", e.Error)
		}
	}
	f.srv.wg.Wait()
	var runs []map[string]any
	f.getJSON("/api/agents/w/runs", &runs)
	if len(runs) != 1 {
		t.Fatalf("runs after resumes with nothing to resume: %v", runs)
	}
}

// An agent id that cannot be one, in the path of a state change, is the
// request's fault: 400, not 500.
func TestInvalidIDIsBadRequest(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	for _, path := range []string{"resume", "snapshot", "fork", "approvals/x/approve", "approvals/x/deny"} {
		var e apiError
		f.decode(f.post("/api/agents/..%2Fx/"+path, struct{}{}), http.StatusBadRequest, &e)
		if !strings.Contains(e.Error, "agent id") {
			t.Errorf("%s: %q", path, e.Error)
		}
	}
}

// A state change's body is one JSON object with only the fields the
// route reads: a misspelt field or data after the object is refused
// (400) rather than ignored, and a body over the limit is 413.
func TestBodiesAreParsedStrictly(t *testing.T) {
	f := newFixture(t, Config{Loopback: true})
	f.run("w", doneAgent, doneScript)
	f.decode(f.post("/api/agents/w/snapshot", map[string]string{"label": "a"}), http.StatusOK, nil)
	for _, c := range []struct{ route, body string }{
		{"fork", `{"form":"a","as":"typo1"}`},
		{"snapshot", `{"lable":"b"}`},
		{"approvals/call_1_0/deny", `{"reson":"no"}`},
		{"resume", `{"strategy":"seal","x":1}`},
		{"snapshot", `{"label":"c"}}`},
		{"snapshot", `{"label":"c"} x`},
		{"approvals/call_1_0/approve", `{} {}`},
	} {
		var e apiError
		f.decode(f.raw(c.route, c.body), http.StatusBadRequest, &e)
		if !strings.Contains(e.Error, "request body") {
			t.Errorf("%s %s: %q", c.route, c.body, e.Error)
		}
	}
	for _, body := range []string{"", `{"label":"d"}` + "\n", ` { "label" : "e" } `} {
		f.decode(f.raw("snapshot", body), http.StatusOK, nil)
	}
	f.decode(f.raw("approvals/call_1_0/approve", " \n"), http.StatusConflict, nil) // read, and not awaiting
	big := `{"label":"` + strings.Repeat("x", maxBody) + `"}`
	f.decode(f.raw("snapshot", big), http.StatusRequestEntityTooLarge, nil)
	var v agentView
	f.getJSON("/api/agents/w", &v)
	var list []agentLine
	f.getJSON("/api/agents", &list)
	if len(list) != 1 || len(v.Bookmarks) != 4 {
		t.Fatalf("a refused body changed the store: agents %d, bookmarks %+v", len(list), v.Bookmarks)
	}
}

// raw posts body as it is, with the token, to a route of agent w.
func (f *fixture) raw(route, body string) *http.Response {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.http.URL+"/api/agents/w/"+route, strings.NewReader(body))
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
