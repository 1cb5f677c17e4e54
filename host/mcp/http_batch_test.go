package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpPoster posts JSON-RPC bodies to a Streamable HTTP server, as a raw
// client would.
type httpPoster struct {
	t   *testing.T
	url string
}

// post sends body in session (none if ""), with the Mcp-Protocol-Version
// header version (none if ""), and returns the answer and its body.
func (p httpPoster) post(session, version, body string) (*http.Response, string) {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	must(p.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	must(p.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(p.t, err)
	return resp, string(b)
}

// session initializes a session of protocol version v and returns its id.
func (p httpPoster) session(v string) string {
	p.t.Helper()
	resp, body := p.post("", "", initLine("1", v, `{}`))
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" || !strings.Contains(body, `"protocolVersion":"`+v+`"`) {
		p.t.Fatalf("initialize %s: %s %s", v, resp.Status, body)
	}
	if resp, body := p.post(id, v, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		p.t.Fatalf("initialized: %s %s", resp.Status, body)
	}
	return id
}

// Regression: over Streamable HTTP, a JSON-RPC batch in a session of
// protocol 2025-06-18 or later (which has none) was answered by the SDK
// with a plain-text 400, or, without an Mcp-Protocol-Version header,
// taken as if the session had batches; an empty body and an empty batch
// were answered with a plain-text 400 too (which the Go SDK's client
// takes for a broken connection), and a batch with a request id twice
// had one answer for both. Each is answered, with status 400, by a
// JSON-RPC error with id null, as stdio answers the same line: -32700
// for an empty body (no JSON), -32600 for a batch. A session of 2025-03-26
// has its batches answered; the session goes on.
func TestHTTPBatchAndEmptyBodyAreJSONRPCErrors(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	newer, older := p.session("2025-06-18"), p.session("2025-03-26")
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, tt := range []struct {
		session, version, body string
		code                   int
	}{
		{newer, "2025-06-18", `[` + ping + `]`, -32600},
		{newer, "", `[` + ping + `]`, -32600},
		{newer, "2025-06-18", ``, -32700},
		{newer, "2025-06-18", `[]`, -32600},
		{"", "", `[` + initLine("1", "2025-03-26", `{}`) + `]`, -32600},
		{"", "", ``, -32700},
		{older, "2025-03-26", ``, -32700},
		{older, "2025-03-26", `[]`, -32600},
		{older, "2025-03-26", `[{"foo":1}]`, -32600},
		{older, "2025-03-26", `[` + ping + `,` + ping + `]`, -32600},
		{older, "2025-03-26", `[{"jsonrpc":"2.0","id":null,"method":"ping"}]`, -32600},
		{older, "2025-03-26", `[{"jsonrpc":"2.0","id":1.5,"method":"ping"}]`, -32600},
		{older, "2025-06-18", `[` + ping + `]`, -32600},
	} {
		resp, body := p.post(tt.session, tt.version, tt.body)
		var m rawMessage
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal([]byte(body), &m) != nil || m.Error == nil || m.Error.Code != tt.code || string(m.ID) != "null" {
			t.Errorf("%q (session %q, version %q): %s %q %s, want 400 with code %d and id null",
				tt.body, tt.session, tt.version, resp.Status, resp.Header.Get("Content-Type"), body, tt.code)
		}
		for _, s := range []struct{ id, v string }{{newer, "2025-06-18"}, {older, "2025-03-26"}} {
			if resp, body := p.post(s.id, s.v, `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"list_dir"`) {
				t.Fatalf("after %q, session of %s: %s %s", tt.body, s.v, resp.Status, body)
			}
		}
	}
	// A batch of a session of 2025-03-26 is answered, a notification in
	// it taken.
	resp, body := p.post(older, "2025-03-26", `[`+ping+`,{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":2,"result":{}`) || !strings.Contains(body, `"list_dir"`) {
		t.Errorf("a batch of 2025-03-26: %s %s", resp.Status, body)
	}
}

// Regression: over Streamable HTTP, a request the SDK does not handle
// (a method it does not know, a notification's method sent with an id,
// a request without the params it needs) and a request with an
// Mcp-Protocol-Version header of a version the server does not speak were
// answered with a plain-text 400, which the Go SDK's client takes for a
// broken connection, where stdio answers -32601 or -32600 naming the
// request's id. They are answered so over HTTP too, with status 400, and
// a notification of a method the server does not know is let go (202), as
// stdio lets it go; the session goes on.
func TestHTTPUnhandledRequestIsAJSONRPCError(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	session := p.session("2025-06-18")
	for _, tt := range []struct {
		version, body string
		code          int
		id            string
	}{
		{"2025-06-18", `{"jsonrpc":"2.0","id":5,"method":"foo/bar"}`, -32601, `5`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":"n","method":"notifications/initialized"}`, -32600, `"n"`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":6,"method":"tools/call"}`, -32600, `6`},
		{"2025-06-18", `{"jsonrpc":"2.0","method":"tools/list"}`, -32600, `null`},
		{"1999-01-01", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, -32600, `7`},
	} {
		resp, body := p.post(session, tt.version, tt.body)
		var m rawMessage
		if resp.StatusCode != http.StatusBadRequest || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal([]byte(body), &m) != nil || m.Error == nil || m.Error.Code != tt.code || string(m.ID) != tt.id {
			t.Errorf("%s (version %s): %s %q %s, want 400 with code %d and id %s", tt.body, tt.version, resp.Status, resp.Header.Get("Content-Type"), body, tt.code, tt.id)
		}
		if resp, body := p.post(session, "2025-06-18", `{"jsonrpc":"2.0","id":99,"method":"tools/list"}`); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"list_dir"`) {
			t.Fatalf("after %s: %s %s", tt.body, resp.Status, body)
		}
	}
	if resp, body := p.post(session, "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/foo"}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a notification the server does not know: %s %s, want 202", resp.Status, body)
	}
}

// batchAnswers is the JSON-RPC messages of an answer's body: a JSON array,
// one message, or the data of a stream of events.
func batchAnswers(t *testing.T, body string) map[string]rawMessage {
	t.Helper()
	var msgs []rawMessage
	switch b := strings.TrimSpace(body); {
	case strings.HasPrefix(b, "["):
		must(t, json.Unmarshal([]byte(b), &msgs))
	case strings.HasPrefix(b, "{"):
		var m rawMessage
		must(t, json.Unmarshal([]byte(b), &m))
		msgs = append(msgs, m)
	default:
		for line := range strings.Lines(b) {
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok && strings.TrimSpace(data) != "" {
				var m rawMessage
				must(t, json.Unmarshal([]byte(data), &m))
				msgs = append(msgs, m)
			}
		}
	}
	byID := map[string]rawMessage{}
	for _, m := range msgs {
		if _, twice := byID[string(m.ID)]; twice {
			t.Errorf("two answers to id %s in %s", m.ID, body)
		}
		byID[string(m.ID)] = m
	}
	return byID
}

// Regression: over Streamable HTTP, a batch of a session of protocol
// 2025-03-26 that held one request of a method the server does not know
// (or a notification's method sent with an id, or a request without the
// params it needs) was refused whole, with one error and id null, none of
// its good requests run, where JSON-RPC answers each member on its own and
// stdio did: the good ones are answered, the others each with their own
// error naming their id (-32601, -32600), and a notification of a method
// the server does not know is let go.
func TestHTTPBatchWithAnUnknownMethodAnswersEachMember(t *testing.T) {
	f := serve(t, "", nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	older := p.session("2025-03-26")
	resp, body := p.post(older, "2025-03-26", `[{"jsonrpc":"2.0","id":2,"method":"ping"},`+
		`{"jsonrpc":"2.0","id":3,"method":"foo/bar"},{"jsonrpc":"2.0","id":4,"method":"tools/list"},`+
		`{"jsonrpc":"2.0","id":5,"method":"tools/call"},{"jsonrpc":"2.0","id":6,"method":"notifications/initialized"},`+
		`{"jsonrpc":"2.0","method":"notifications/foo"},{"jsonrpc":"2.0","id":7,"method":"foo/bar"},`+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the batch: %s %s", resp.Status, body)
	}
	got := batchAnswers(t, body)
	for id, want := range map[string]int{"2": 0, "3": -32601, "4": 0, "5": -32600, "6": -32600, "7": -32601} {
		m, ok := got[id]
		switch {
		case !ok:
			t.Errorf("request %s: no answer in %s", id, body)
		case want == 0 && (m.Error != nil || m.Result == nil):
			t.Errorf("request %s: %v, want its result", id, m)
		case want != 0 && (m.Error == nil || m.Error.Code != want):
			t.Errorf("request %s: %v, want error %d", id, m, want)
		}
	}
	if len(got) != 6 || !strings.Contains(string(got["4"].Result), `"list_dir"`) || !strings.Contains(got["3"].Error.Message, `"foo/bar"`) {
		t.Errorf("the batch's answers: %s", body)
	}
	// A batch none of whose members the SDK handles has each answered.
	resp, body = p.post(older, "2025-03-26", `[{"jsonrpc":"2.0","id":8,"method":"foo/bar"},{"jsonrpc":"2.0","method":"notifications/foo"}]`)
	if got := batchAnswers(t, body); resp.StatusCode != http.StatusOK || len(got) != 1 || got["8"].Error == nil || got["8"].Error.Code != -32601 {
		t.Errorf("a batch of an unknown method: %s %s", resp.Status, body)
	}
	resp, body = p.post(older, "2025-03-26", `[{"jsonrpc":"2.0","method":"notifications/foo"}]`)
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("a batch of an unknown notification: %s %s, want 202", resp.Status, body)
	}
}

// Regression: a batch of many requests of methods the server does not
// know, each another, was handed to the SDK once for each of them, the
// rest of the batch again every time (a body of 2,000 took more than a
// minute to answer, and one of the 4 MiB a body may have, hours): the
// members the SDK would refuse are taken out before it sees the batch,
// which it is handed at most maxBatchPasses times.
func TestHTTPBatchOfManyUnknownMethodsIsServedOnce(t *testing.T) {
	f := serve(t, "", nil)
	var passes atomic.Int32
	inner := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return f.srv.srv }, nil)
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passes.Add(1)
		inner.ServeHTTP(w, r)
	})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := peekBody(r)
		if r.Header.Get("Mcp-Session-Id") != "" && bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			serveBatch(w, r, body, counted)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p := httpPoster{t, hs.URL}
	session := p.session("2025-03-26")
	members := []string{`{"jsonrpc":"2.0","id":"p","method":"ping"}`}
	for i := range 50 {
		members = append(members, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"x/%d"}`, i, i))
	}
	resp, body := p.post(session, "2025-03-26", "["+strings.Join(members, ",")+"]")
	got := batchAnswers(t, body)
	if resp.StatusCode != http.StatusOK || len(got) != 51 || got[`"p"`].Result == nil || got["49"].Error == nil || got["49"].Error.Code != -32601 {
		t.Errorf("the batch: %s, %d answers: %.300s", resp.Status, len(got), body)
	}
	if n := passes.Load(); n > maxBatchPasses {
		t.Errorf("the SDK was handed the batch %d times, want at most %d", n, maxBatchPasses)
	}
}
