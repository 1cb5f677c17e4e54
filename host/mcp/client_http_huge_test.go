package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnrun/cairn/host"
)

// floodServer serves over Streamable HTTP, its answers as server-sent
// events or, with asJSON, as JSON bodies, the tools huge and shout of the
// SDK's server and two it answers by hand: flood answers that many bytes
// of text, written a piece at a time (the SDK's server would build the
// answer in memory, which would hide the client's), and stall writes half
// an answer and waits until the request ends.
func floodServer(t *testing.T, asJSON bool) (url string) {
	type bytesIn struct {
		Bytes int `json:"bytes"`
	}
	type shoutIn struct {
		Text string `json:"text"`
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "toy", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "huge"}, func(_ context.Context, _ *sdk.CallToolRequest, in bytesIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("h", in.Bytes)}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "shout"}, func(_ context.Context, _ *sdk.CallToolRequest, in shoutIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
	})
	byHand := func(context.Context, *sdk.CallToolRequest, bytesIn) (*sdk.CallToolResult, any, error) {
		return nil, nil, errors.New("answered by the test's handler")
	}
	sdk.AddTool(s, &sdk.Tool{Name: "flood"}, byHand)
	sdk.AddTool(s, &sdk.Tool{Name: "stall"}, byHand)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{JSONResponse: asJSON})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var call struct {
			ID     json.RawMessage
			Method string
			Params struct {
				Name      string
				Arguments bytesIn
			}
		}
		json.Unmarshal(body, &call)
		if call.Method != "tools/call" || call.Params.Name != "flood" && call.Params.Name != "stall" {
			h.ServeHTTP(w, r)
			return
		}
		head, tail := `{"jsonrpc":"2.0","id":`+string(call.ID)+`,"result":{"content":[{"type":"text","text":"`, `"}]}}`
		if asJSON {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
			head, tail = "event: message\ndata: "+head, tail+"\n\n"
		}
		io.WriteString(w, head+"hh")
		if call.Params.Name == "stall" {
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		chunk := bytes.Repeat([]byte("h"), 64<<10)
		for n := call.Params.Arguments.Bytes; n > 0; n -= len(chunk) {
			if _, err := w.Write(chunk[:min(n, len(chunk))]); err != nil {
				return
			}
		}
		io.WriteString(w, tail)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// transports are the two ways a url server answers.
var transports = []struct {
	name   string
	asJSON bool
}{{"events", false}, {"json", true}}

// digits are what differs between two results of the same failure: sizes.
var digits = regexp.MustCompile(`[0-9]+`)

// Regression: a url server's answer was read whole, however large (the
// SDK's streamable client buffers an event or a JSON body without a
// bound), and only then checked against the output limit: an answer of
// hundreds of MiB could take cairn's memory. It is dropped while it is
// read, past eight times the sandbox output, as a command server's is: the
// call fails with the result a command server's gets (the answer passed
// the bytes cairn reads of one; sandbox: {output} raises the limit), and
// the session goes on.
func TestServerOverHTTPHugeAnswerFailsOnlyItsCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	calls := []string{"{name: huge, input: {bytes: 10485760}}", "{name: flood, input: {bytes: 20971520}}", "{name: shout, input: {text: hi}}"}
	byCommand, _, _, err := runServerCalls(t, ctx, "{output: 64KiB}", toyCommand(t), calls[0], calls[2])
	must(t, err)
	for _, tr := range transports {
		results, res, dir, err := runServerCalls(t, ctx, "{output: 64KiB, timeout: 60s}", "url: "+floodServer(t, tr.asJSON), calls...)
		must(t, err)
		for i, m := range results[:2] {
			if !m.IsError || !strings.Contains(m.Text, "more than the output limit of 65536 bytes") ||
				!strings.Contains(m.Text, "passed the 589824 bytes cairn reads of one") ||
				!strings.Contains(m.Text, "sandbox: {output} raises the limit") || len(m.Text) > 1000 {
				t.Errorf("%s: huge call %d: result %.300q (%d bytes), want an error naming the limit and its setting", tr.name, i+1, m.Text, len(m.Text))
			}
			_, got, _ := strings.Cut(digits.ReplaceAllString(m.Text, "N"), ": ") // after the tool's name
			if _, want, _ := strings.Cut(digits.ReplaceAllString(byCommand[0].Text, "N"), ": "); got != want {
				t.Errorf("%s: huge call %d: journaled %q,\nwant what a command server's is: %q", tr.name, i+1, m.Text, byCommand[0].Text)
			}
		}
		if m := results[2]; m.IsError || m.Text != "HI" {
			t.Errorf("%s: the call after them: %+v", tr.name, m)
		}
		if res.Status != host.StatusDone {
			t.Errorf("%s: run %s: %s", tr.name, res.Status, res.Reason)
		}
		if n := sizeOf(t, dir); n > 1<<20 {
			t.Errorf("%s: the agent's directory holds %d bytes after the huge answers", tr.name, n)
		}
	}
}

// Regression: the same, measured: a url server's answer of 64 MiB took
// hundreds of MiB of cairn's memory. What cairn allocates to read it is
// bounded by what it reads of one answer, whatever its size, and the
// connection answers the next call.
func TestServerOverHTTPHugeAnswerIsNotKept(t *testing.T) {
	for _, tr := range transports {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		tools, err := Connect(ctx, host.MCPServer{Name: "toy", URL: floodServer(t, tr.asJSON)}, t.TempDir(),
			host.Limits{Timeout: host.Duration(time.Minute), Output: 64 << 10})
		must(t, err)
		defer tools.Close()
		c := tools.(*conn)
		session := c.cs
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, _, err := tools.Call(ctx, "flood", json.RawMessage(`{"bytes":67108864}`))
		runtime.ReadMemStats(&after)
		if !errors.Is(err, host.ErrOutputLimit) || !strings.Contains(err.Error(), "passed the 589824 bytes cairn reads of one") {
			t.Errorf("%s: the huge call: %.200q, %v; want host.ErrOutputLimit", tr.name, out, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("%s: reading an answer of 64 MiB allocated %d MiB", tr.name, n>>20)
		}
		if out, isError, err := tools.Call(ctx, "shout", json.RawMessage(`{"text":"hi"}`)); err != nil || isError || out != "HI" {
			t.Errorf("%s: the call after: %q, %v, %v", tr.name, out, isError, err)
		}
		if c.cs != session {
			t.Errorf("%s: the session was made again, want it to go on", tr.name)
		}
	}
}

// A url server whose answer stops midway, an event or a JSON body half
// written, is bounded by the sandbox timeout as a command server's hang
// is, and the next call is answered.
func TestServerOverHTTPStalledAnswerTimesOut(t *testing.T) {
	for _, tr := range transports {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		results, res, _, err := runServerCalls(t, ctx, "{output: 64KiB, timeout: 1s}", "url: "+floodServer(t, tr.asJSON),
			"{name: stall, input: {bytes: 0}}", "{name: shout, input: {text: hi}}")
		must(t, err)
		if m := results[0]; !m.IsError || !strings.Contains(m.Text, "ran past its time limit of 1s") {
			t.Errorf("%s: the stalled call: %q", tr.name, m.Text)
		}
		if m := results[1]; m.IsError || m.Text != "HI" {
			t.Errorf("%s: the call after: %+v", tr.name, m)
		}
		if res.Status != host.StatusDone {
			t.Errorf("%s: run %s: %s", tr.name, res.Status, res.Reason)
		}
	}
}

// Regression: a call that stopped waiting for a url server's JSON answer
// (its time ran out) ended the connection (the SDK's client ends it when
// a body cannot be read), and the next call, sent before the end was
// noticed, failed with the stopped call's error. The connection goes on,
// as it does when a stream of events is cut so.
func TestServerOverHTTPStalledAnswerKeepsTheSession(t *testing.T) {
	for _, tr := range transports {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		tools, err := Connect(ctx, host.MCPServer{Name: "toy", URL: floodServer(t, tr.asJSON)}, t.TempDir(),
			host.Limits{Timeout: host.Duration(time.Minute), Output: 64 << 10})
		must(t, err)
		defer tools.Close()
		c := tools.(*conn)
		session := c.cs
		for i := range 10 {
			cctx, stop := context.WithTimeout(ctx, 50*time.Millisecond)
			_, _, err := tools.Call(cctx, "stall", json.RawMessage(`{"bytes":0}`))
			stop()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: stalled call %d: %v, want its deadline", tr.name, i, err)
			}
			if out, isError, err := tools.Call(ctx, "shout", json.RawMessage(`{"text":"hi"}`)); err != nil || isError || out != "HI" {
				t.Errorf("%s: the call after stalled call %d: %q, %v, %v", tr.name, i, out, isError, err)
			}
		}
		if c.cs != session {
			t.Errorf("%s: the session was made again, want it to go on", tr.name)
		}
	}
}
