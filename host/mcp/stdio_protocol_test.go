package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// initLine is an initialize request of protocol version v with caps.
func initLine(id, v, caps string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"raw","version":"1"}}}`,
		id, v, caps)
}

// Regression: on stdio, a request before initialize was answered with
// code 0, which is no JSON-RPC code; id 1.5 was answered with id 1 and an
// id past what a float64 holds exactly with another number; a request
// sent with the id of one in flight was never answered; and a request the
// client cancelled was answered all the same. Each is refused with
// -32600 naming its id, and a cancelled request is not answered.
func TestStdioProtocolErrors(t *testing.T) {
	t.Run("before initialize", func(t *testing.T) {
		out := serveLines(t, serve(t, "", nil), `{"jsonrpc":"2.0","id":"pre","method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":"ping","method":"ping"}`, initLine(`"init"`, "2025-06-18", `{}`),
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":"after","method":"tools/list"}`)
		if m := out[`"pre"`]; m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, `"tools/list" before initialize`) {
			t.Errorf("tools/list before initialize: %v", m)
		}
		for _, id := range []string{`"ping"`, `"init"`, `"after"`} {
			if m := out[id]; m.Error != nil || m.Result == nil {
				t.Errorf("request %s: %v", id, m)
			}
		}
	})
	t.Run("ids", func(t *testing.T) {
		c := newRawClient(t, context.Background(), serve(t, "", nil).srv, "2025-06-18", `{}`)
		for _, id := range []string{`1.5`, `99999999999999999999999`, `9007199254740993`, `1e3`} {
			c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
			if m := c.replyTo(); m.Error == nil || m.Error.Code != -32600 || string(m.ID) != id || !strings.Contains(m.Error.Message, "id "+id) {
				t.Errorf("ping with id %s: answered %v", id, m)
			}
		}
		c.send(`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`)
		if m := c.replyTo(); string(m.ID) != "-9007199254740991" || m.Result == nil {
			t.Errorf("ping with id -9007199254740991: answered %v", m)
		}
	})
	t.Run("duplicate id", func(t *testing.T) {
		f := serve(t, "", nil)
		c := newRawClient(t, context.Background(), f.srv, "2025-06-18", `{}`)
		c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_and_wait","arguments":{"path":"w.txt","content":"w"}}}`)
		waitForStaged(t, filepath.Join(f.store.Dir(), "agents", "m", "staging", "round-1", "mcp-1"), "w.txt")
		c.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
		if m := c.replyTo(); m.Error == nil || m.Error.Code != -32600 || string(m.ID) != "7" ||
			!strings.Contains(m.Error.Message, "request id 7 is in use by a request in flight") {
			t.Errorf("a second request 7: answered %v", m)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		f := serve(t, "", nil)
		c := newRawClient(t, context.Background(), f.srv, "2025-06-18", `{}`)
		c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_and_wait","arguments":{"path":"w.txt","content":"w"}}}`)
		waitForStaged(t, filepath.Join(f.store.Dir(), "agents", "m", "staging", "round-1", "mcp-1"), "w.txt")
		c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			rec, err := f.store.Read("m")
			must(t, err)
			if rec.State.Round == 1 && len(rec.Tail) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the cancelled call's round was not committed within a minute")
			}
		}
		c.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
		if m := c.replyTo(); string(m.ID) != "8" || m.Result == nil {
			t.Errorf("after the cancelled request 7, answered %v, want the answer to 8 alone", m)
		}
		// The round commits before the cancelled call's handler returns:
		// id 7 is free once it has, and is refused as in use until then.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			c.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
			m := c.replyTo()
			if m.Error != nil && strings.Contains(m.Error.Message, "in use by a request in flight") && time.Now().Before(deadline) {
				continue
			}
			if string(m.ID) != "7" || string(m.Result) != "{}" {
				t.Errorf("id 7 once its request was cancelled: %v, want the answer to the ping", m)
			}
			break
		}
	})
}

// serveLines serves f's server on lines, which end with the input, and
// returns its answers by id.
func serveLines(t *testing.T, f *fixture, lines ...string) map[string]rawMessage {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.srv.ServeIO(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatalf("ServeIO: %v", err)
	}
	answers := map[string]rawMessage{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m rawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("answer %q: %v", sc.Text(), err)
		}
		if m.ID != nil {
			answers[string(m.ID)] = m
		}
	}
	return answers
}

// Regression: requests that arrived just before the end of the input
// went unanswered (`printf 'init\ninitialized\ntools/call\n' | cairn mcp`
// answered nothing to the call, and it was never journaled): the SDK
// stops the calls in flight at the end of the input and writes nothing
// more. Each request read is answered, its call run to its end, before
// ServeIO returns; a call that waits for the client's answer to an
// approval question is denied, since none can come.
func TestStdioAnswersRequestsReadBeforeEOF(t *testing.T) {
	for i := range 3 {
		f := serve(t, "", nil)
		out := serveLines(t, f, initLine("0", "2025-06-18", `{}`), `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.txt","content":"%d"}}}`, i),
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count","arguments":{"text":"a b"}}}`)
		for _, id := range []string{"1", "2"} {
			if m := out[id]; m.Result == nil || strings.Contains(string(m.Result), `"isError":true`) {
				t.Errorf("run %d: request %s answered %v", i, id, m)
			}
		}
		rec, err := f.store.Read("m")
		must(t, err)
		if rec.State.Round != 2 {
			t.Errorf("run %d: %d rounds journaled, want 2", i, rec.State.Round)
		}
	}
	// A client of an older protocol is asked about an approval by the SDK
	// itself: with the input ended, it cannot answer.
	f := serve(t, "approvals: [{tool: write_file, action: ask}]\n", nil)
	out := serveLines(t, f, initLine("0", "2025-06-18", `{"elicitation":{}}`), `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a.txt","content":"a"}}}`)
	if m := out["1"]; m.Error == nil && m.Result == nil {
		t.Errorf("a call asked about at the end of the input: %v", m)
	}
}

// The same for a call in flight when ServeIO's context ends (a signal to
// `cairn mcp`): the call stops, and its answer says the server stopped
// before the session ends.
func TestStdioContextEndAnswersCallInFlight(t *testing.T) {
	f := serve(t, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	c := newRawClient(t, ctx, f.srv, "2025-06-18", `{}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_and_wait","arguments":{"path":"x.txt","content":"staged"}}}`)
	waitForStaged(t, filepath.Join(f.store.Dir(), "agents", "m", "staging", "round-1", "mcp-1"), "x.txt")
	cancel()
	m := c.replyTo()
	if string(m.ID) != "1" || m.Error == nil || !strings.Contains(m.Error.Message, "the MCP server stopped serving this client") ||
		!strings.Contains(m.Error.Message, "its round (1, call mcp-1) committed") {
		t.Errorf("the call in flight was answered %v", m)
	}
	<-c.done
}
