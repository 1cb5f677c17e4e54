package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// failingServer serves over Streamable HTTP, its answers as server-sent
// events or, with asJSON, as JSON bodies, the SDK's server with the tools
// fail (a tool's error) and shout, and answers by hand the calls of
// rpcerr (a JSON-RPC error, status 200), busy (the same error with status
// 503), quota (status 400 with a JSON body that is no JSON-RPC message),
// cut (half an answer, then its connection closed), otherid (an answer
// to another request's id), accepted (202 and no body) and busyfloat
// (busy's answer with its id written 7.0 for 7).
func failingServer(t *testing.T, asJSON bool) (url string) {
	s := sdk.NewServer(&sdk.Implementation{Name: "toy", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "fail"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return nil, nil, errors.New("disk full")
	})
	sdk.AddTool(s, &sdk.Tool{Name: "shout"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "HI"}}}, nil, nil
	})
	for _, name := range []string{"rpcerr", "busy", "quota", "cut", "otherid", "accepted", "busyfloat"} {
		sdk.AddTool(s, &sdk.Tool{Name: name}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("answered by the test's handler")
		})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: asJSON})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var call struct {
			ID     json.RawMessage
			Method string
			Params struct{ Name string }
		}
		json.Unmarshal(body, &call)
		rpcErr := `{"jsonrpc":"2.0","id":` + string(call.ID) + `,"error":{"code":-32000,"message":"backend down: try again in 5 minutes"}}`
		answer := func(status int, body string) {
			w.Header().Set("Content-Type", "application/json")
			if asJSON || status != http.StatusOK {
				w.WriteHeader(status)
				io.WriteString(w, body)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: "+body+"\n\n")
		}
		switch {
		case call.Method != "tools/call":
			h.ServeHTTP(w, r)
		case call.Params.Name == "rpcerr":
			answer(http.StatusOK, rpcErr)
		case call.Params.Name == "busy":
			answer(http.StatusServiceUnavailable, rpcErr)
		case call.Params.Name == "busyfloat": // its id written as a float: 7.0 for 7
			answer(http.StatusServiceUnavailable, strings.Replace(rpcErr, `"id":`+string(call.ID), `"id":`+string(call.ID)+`.0`, 1))
		case call.Params.Name == "otherid":
			answer(http.StatusOK, `{"jsonrpc":"2.0","id":"zz","result":{"content":[]}}`)
		case call.Params.Name == "accepted":
			w.WriteHeader(http.StatusAccepted)
		case call.Params.Name == "quota":
			answer(http.StatusBadRequest, `{"error": "quota of key k1 exceeded"}`)
		case call.Params.Name == "cut":
			half := `{"jsonrpc":"2.0","id":` + string(call.ID) + `,"result":{"content":[{"type":"text","text":"ha`
			if asJSON {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", "1000")
			} else {
				w.Header().Set("Content-Type", "text/event-stream")
				half = "event: message\ndata: " + half
			}
			io.WriteString(w, half)
			w.(http.Flusher).Flush()
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		default:
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Regression: what a url server said of a call that failed was lost, as
// events and in the SDK's JSON-response mode: a JSON-RPC error answered
// with status 503 (or 500, 502, 504, 429) reached the model as "Service
// Unavailable", a 400 whose body said why as "Bad Request", an answer cut
// short as "failed to read body: unexpected EOF" (and the session was
// ended) or "request terminated without response", an answer to another
// request's id as the call's time running out, and a 202 with no answer
// as "unsupported content type". Each reaches the model with what the
// server said, or how far its answer came, or what came instead, and the
// session goes on.
func TestServerOverHTTPErrorsReachTheModel(t *testing.T) {
	want := [][]string{
		{"disk full"},
		{"answered the call with an error (JSON-RPC code -32000): backend down: try again in 5 minutes"},
		{"answered the call with an error (JSON-RPC code -32000): backend down: try again in 5 minutes"},
		{"failed during the call", "400 Bad Request", "quota of key k1 exceeded"},
		{"failed during the call", "cut"},
		{"failed during the call", `a response to another request (id "zz", where the call's is`},
		{"failed during the call", "the server answered 202 Accepted with no body, not the call's answer"},
		{"answered the call with an error (JSON-RPC code -32000): backend down: try again in 5 minutes"},
		{"HI"},
	}
	wantCut := map[bool]string{true: "the server cut its answer short: 70 bytes of the 1000 it announced came before the connection failed",
		false: "the server's stream of events failed after 0 of them, without the call's answer"}
	for _, tr := range transports {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		results, res, _, err := runServerCalls(t, ctx, "{output: 64KiB, timeout: 30s}", "url: "+failingServer(t, tr.asJSON),
			"{name: fail, input: {}}", "{name: rpcerr, input: {}}", "{name: busy, input: {}}", "{name: quota, input: {}}",
			"{name: cut, input: {}}", "{name: otherid, input: {}}", "{name: accepted, input: {}}", "{name: busyfloat, input: {}}", "{name: shout, input: {}}")
		must(t, err)
		want[4][1] = wantCut[tr.asJSON]
		for i, m := range results {
			for _, w := range want[i] {
				if !strings.Contains(m.Text, w) || m.IsError != (w != "HI") {
					t.Errorf("%s: call %d: %q (error %v), want it to say %q", tr.name, i+1, m.Text, m.IsError, w)
				}
			}
		}
		if res.Status != host.StatusDone {
			t.Errorf("%s: run %s: %s", tr.name, res.Status, res.Reason)
		}
	}
}

// Regression: the same, in the connection itself: a call whose answer
// was cut short ended the session (the SDK's client ends it when a JSON
// body cannot be read), where it is the call's failure alone.
func TestServerOverHTTPCutAnswerKeepsTheSession(t *testing.T) {
	for _, tr := range transports {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		tools, err := Connect(ctx, host.MCPServer{Name: "toy", URL: failingServer(t, tr.asJSON)}, t.TempDir(),
			host.Limits{Timeout: host.Duration(time.Minute), Output: 64 << 10})
		must(t, err)
		defer tools.Close()
		c := tools.(*conn)
		session := c.cs
		if _, _, err := tools.Call(ctx, "cut", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "without the call's answer") && !strings.Contains(err.Error(), "cut its answer short") {
			t.Errorf("%s: the cut call: %v", tr.name, err)
		}
		if out, isError, err := tools.Call(ctx, "shout", json.RawMessage(`{}`)); err != nil || isError || out != "HI" {
			t.Errorf("%s: the call after: %q, %v, %v", tr.name, out, isError, err)
		}
		if c.cs != session {
			t.Errorf("%s: the session was made again, want it to go on", tr.name)
		}
	}
}
