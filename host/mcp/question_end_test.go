package mcp

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// askWrites is the approval rule of these tests: write_file is put to the
// client's user.
const askWrites = "approvals: [{tool: write_file, action: ask}]\n"

// askedCall sends a write_file call, with id, that the server puts to the
// client's user, and returns the question it asks.
func askedCall(t *testing.T, c *rawClient, id string) rawMessage {
	t.Helper()
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"w.txt","content":"w"}}}`)
	q := c.replyTo()
	if q.Method != "elicitation/create" {
		t.Fatalf("the call was answered %v, want a question", q)
	}
	return q
}

// committedResult waits until round is committed and returns the result
// the call of that round came to.
func committedResult(t *testing.T, f *fixture, round int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec, err := f.store.Read("m")
		must(t, err)
		if rec.State.Round >= round && len(rec.Tail) == 0 {
			for _, m := range rec.State.Messages {
				if m.CallID == "mcp-"+strconv.Itoa(round) && m.IsError {
					return m.Text
				}
			}
			t.Fatalf("round %d committed without an error result for its call: %+v", round, rec.State.Messages)
		}
		if time.Now().After(deadline) {
			t.Fatalf("round %d not committed within 30 s: round %d, %d open records", round, rec.State.Round, len(rec.Tail))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Regression: a stop of the server (SIGTERM or SIGINT to `cairn mcp`: the
// end of ServeIO's context) was ignored while a call waited for its
// approval question's answer: the SDK asked the client with a context no
// stop ends, so ServeIO waited out its grace, then the session's close
// waited for the call, and only a second signal ended the process. The
// question is abandoned at once: the call is denied and did not run, its
// round committed, and its answer says that the server stopped.
func TestServeIOStopAbandonsApprovalQuestion(t *testing.T) {
	f := serve(t, askWrites, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := newRawClient(t, ctx, f.srv, "2025-06-18", `{"elicitation":{}}`)
	askedCall(t, c, "1")
	stopped := time.Now()
	cancel()
	m := c.replyTo()
	if string(m.ID) != "1" || m.Error == nil || m.Error.Code != -32603 ||
		!strings.Contains(m.Error.Message, "approval question") || !strings.Contains(m.Error.Message, "round (1, call mcp-1) committed") {
		t.Errorf("the call asked about was answered %v", m)
	}
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeIO still serves 5 s after its context ended, with a question open")
	}
	if d := time.Since(stopped); d > 5*time.Second {
		t.Errorf("ServeIO took %s to end", d)
	}
	if res := committedResult(t, f, 1); !strings.Contains(res, "denied") || !strings.Contains(res, "stopped") {
		t.Errorf("the stopped call's result: %q", res)
	}
}

// Regression: the same over Streamable HTTP: Close (a signal to `cairn
// mcp --http`) left a call that waited for its approval question's answer
// unjournaled, and the process waited for it. Close abandons the
// question: the call is denied, its round committed.
func TestCloseAbandonsApprovalQuestion(t *testing.T) {
	f := serve(t, askWrites, nil)
	hs := httptest.NewServer(f.srv.Handler(""))
	t.Cleanup(hs.Close)
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		return resp
	}
	resp := post("", initLine("1", "2025-06-18", `{"elicitation":{}}`))
	session := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	call := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"w.txt","content":"w"}}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("the call's stream ended before a question: %v", err)
		}
		if strings.HasPrefix(line, "data:") && strings.Contains(line, "elicitation/create") {
			break
		}
	}
	closed := make(chan struct{})
	go func() {
		f.srv.Close()
		close(closed)
	}()
	go io.Copy(io.Discard, call.Body)
	if res := committedResult(t, f, 1); !strings.Contains(res, "denied") || !strings.Contains(res, "the MCP server was closed") {
		t.Errorf("the call asked about when the server closed: %q", res)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Error("Close did not return within 10 s")
	}
}

// Regression: a call that waited for its approval question's answer and
// that the client then cancelled was never journaled (the SDK's question
// failed, and it answered for the call itself). It is committed, denied,
// its result saying that the client cancelled it; on stdio nothing
// answers it, as for any cancelled request, and the session goes on.
func TestCancelledWhileAskedIsJournaled(t *testing.T) {
	f := serve(t, askWrites, nil)
	c := newRawClient(t, context.Background(), f.srv, "2025-06-18", `{"elicitation":{}}`)
	askedCall(t, c, "1")
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if res := committedResult(t, f, 1); !strings.Contains(res, "denied") || !strings.Contains(res, "the MCP client cancelled it") {
		t.Errorf("the cancelled call's result: %q", res)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := c.replyTo(); string(m.ID) != "2" || m.Error != nil {
		t.Errorf("after the cancelled call, ping was answered %v (the cancelled call's answer must not be written)", m)
	}
}

// Regression: a question the client answered with a JSON-RPC error left
// the call unjournaled, and the call was answered with the client's own
// code (-1) and the SDK's words ("multi-round-trip: fulfilling input
// request ..."). The question is dismissed: the call is denied, its round
// committed, and its result says so with the client's message.
func TestQuestionAnsweredWithAnErrorDismissesIt(t *testing.T) {
	f := serve(t, askWrites, nil)
	c := newRawClient(t, context.Background(), f.srv, "2025-06-18", `{"elicitation":{}}`)
	q := askedCall(t, c, "1")
	c.send(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"error":{"code":-1,"message":"user closed the dialog"}}`)
	m := c.replyTo()
	if string(m.ID) != "1" || m.Error != nil || !strings.Contains(string(m.Result), `"isError":true`) ||
		!strings.Contains(string(m.Result), "dismissed") || !strings.Contains(string(m.Result), "user closed the dialog") ||
		strings.Contains(string(m.Result), "multi-round-trip") {
		t.Errorf("the call whose question was answered with an error: %v", m)
	}
	rec, err := f.store.Read("m")
	must(t, err)
	if rec.State.Round != 1 || len(rec.Tail) != 0 {
		t.Errorf("round %d, %d open records; want round 1 committed", rec.State.Round, len(rec.Tail))
	}
}
