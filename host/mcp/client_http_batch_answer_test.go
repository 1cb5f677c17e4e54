package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// Regression: a url server that answered a call with a JSON-RPC batch (a
// JSON array holding the call's answer), as a JSON body or as an event's
// data, failed the call, and the SDK's client ended the connection ("failed
// to decode"): it reads one message where a batch may stand. The answer in
// the batch is the call's, and the batch's other members, a notification
// and a response to a request the client never sent, are let go; the
// session goes on. A batch that holds no answer to the call (the tool
// without) fails the call saying what came, and one over the limit of an
// answer (huge) fails it saying so, as an answer over it does; the
// session goes on.
func TestServerOverHTTPAnswersWithABatch(t *testing.T) {
	for _, asJSON := range []bool{true, false} {
		s := sdk.NewServer(&sdk.Implementation{Name: "toy", Version: "1"}, nil)
		for _, name := range []string{"shout", "without", "huge"} {
			sdk.AddTool(s, &sdk.Tool{Name: name}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				if req.Params.Name == "huge" {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("h", 1<<20)}}}, nil, nil
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "HI"}}}, nil, nil
			})
		}
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: asJSON})
		stray := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"batched"}},` +
			`{"jsonrpc":"2.0","id":"nobody-asked","result":{"content":[]}}`
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var call struct {
				Method string
				Params struct{ Name string }
			}
			json.Unmarshal(body, &call)
			if call.Method != "tools/call" {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			batch := func(answer string) string {
				if call.Params.Name == "without" {
					return "[" + stray + "]"
				}
				return "[" + stray + ",\n" + answer + "]"
			}
			if asJSON {
				io.WriteString(w, batch(strings.TrimSpace(rec.Body.String())))
				return
			}
			for line := range strings.Lines(rec.Body.String()) {
				if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"result"`) {
					line = "data: " + strings.ReplaceAll(batch(strings.TrimSpace(data)), "\n", "\ndata: ") + "\n"
				}
				io.WriteString(w, line)
			}
		}))
		t.Cleanup(srv.Close)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		tools, err := Connect(ctx, host.MCPServer{Name: "toy", URL: srv.URL}, t.TempDir(), host.Limits{Timeout: host.Duration(time.Minute), Output: 64 << 10})
		must(t, err)
		defer tools.Close()
		for i, c := range []struct {
			tool, out string
			err       bool
		}{
			{"shout", "HI", false},
			{"without", map[bool]string{true: "batch of 2 messages, none of them the call's answer", false: "ended its stream of events after 1 of them, without the call's answer"}[asJSON], true},
			{"shout", "HI", false},
			{"huge", "its answer, a JSON-RPC batch of", true},
			{"shout", "HI", false},
		} {
			out, isError, err := tools.Call(ctx, c.tool, json.RawMessage(`{}`))
			switch {
			case c.err && (err == nil || !strings.Contains(err.Error(), c.out)):
				t.Errorf("as JSON %v: call %d (%s): %q, %v, %v, want an error saying %q", asJSON, i+1, c.tool, out, isError, err, c.out)
			case !c.err && (err != nil || isError || out != c.out):
				t.Errorf("as JSON %v: call %d (%s): %q, %v, %v", asJSON, i+1, c.tool, out, isError, err)
			}
		}
	}
}

// Regression: the member of a url server's batch that answers the call,
// its id written otherwise than the request's (7.0 for 7), passed on as
// written, which a client matching answers to calls by the id as written
// would not match. It passes on with the request's own id (7), as a JSON
// body and as an event's data; another request's answer in the batch is
// let go.
func TestServerOverHTTPBatchAnswerHasTheRequestsID(t *testing.T) {
	const batch = `[{"jsonrpc":"2.0","id":"nobody-asked","result":{}},{"jsonrpc":"2.0","id":7.0,"result":{"content":[]}}]`
	for _, asJSON := range []bool{true, false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if asJSON {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, batch)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+batch+"\n\n")
		}))
		defer srv.Close()
		req, err := http.NewRequest("POST", srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"shout"}}`))
		must(t, err)
		resp, err := capped{next: http.DefaultTransport, limit: 64 << 10}.RoundTrip(req)
		must(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		must(t, err)
		var answers []string
		for _, line := range strings.Split(string(body), "\n") {
			var m struct{ ID json.RawMessage }
			if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m) == nil {
				answers = append(answers, string(m.ID))
			}
		}
		if len(answers) != 1 || answers[0] != "7" {
			t.Errorf("as JSON %v: passed on answers of ids %q, want one of id 7:\n%s", asJSON, answers, body)
		}
	}
}
