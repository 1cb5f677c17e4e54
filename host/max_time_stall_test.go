package host

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnrun/cairn/checkpoint"
)

// How a stallingModel holds a request.
const (
	answering = iota // it answers
	hanging          // headers sent, then nothing
	trickling        // an answer begun, a text delta of one space after another, never its end
)

// stallingModel is a model server speaking protocol ("openai" or
// "anthropic") over real HTTP. From its request number from on, while
// stall holds hanging or trickling, it holds each request so until the
// client goes away; otherwise it answers a request that carries no tool
// result with a call of list_dir, and one that does with the text "done".
func stallingModel(t *testing.T, protocol string, from int64) (srv *httptest.Server, stall *atomic.Int32) {
	stall = &atomic.Int32{}
	var n atomic.Int64
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		mode := stall.Load()
		if n.Add(1) < from {
			mode = answering
		}
		switch mode {
		case hanging:
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case trickling:
			trickle(w, r.Context(), protocol)
		default:
			call := !strings.Contains(string(body), `"tool_call_id"`) && !strings.Contains(string(body), `"tool_result"`)
			fmt.Fprint(w, stallingAnswer(protocol, call))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, stall
}

func trickle(w http.ResponseWriter, ctx context.Context, protocol string) {
	start, delta := `data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}`+"\n\n", `data: {"choices":[{"index":0,"delta":{"content":" "}}]}`+"\n\n"
	if protocol == "anthropic" {
		start = sse("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":11,"output_tokens":1}}}`) +
			sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		delta = sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" "}}`)
	}
	fmt.Fprint(w, start)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		w.(http.Flusher).Flush()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fmt.Fprint(w, delta)
		}
	}
}

func sse(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

func stallingAnswer(protocol string, call bool) string {
	if protocol == "openai" {
		chunk := `{"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`
		if call {
			chunk = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"list_dir","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
		}
		return "data: " + chunk + "\n\ndata: [DONE]\n\n"
	}
	s := sse("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":11,"output_tokens":1}}}`)
	stop := "end_turn"
	if call {
		stop = "tool_use"
		s += sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"list_dir","input":{}}}`)
		s += sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`)
	} else {
		s += sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		s += sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"done"}}`)
	}
	s += sse("content_block_stop", `{"type":"content_block_stop","index":0}`)
	s += sse("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q},"usage":{"output_tokens":5}}`, stop))
	return s + sse("message_stop", `{"type":"message_stop"}`)
}

// stallingAgent is an agent whose model is a stallingModel at %[2]s
// speaking %[1]s, with the limits %[3]s.
const stallingAgent = `
name: stalled
model: {provider: %[1]s, name: test-model, base_url: %[2]s, max_retries: -1}
workspace: workspace
tools: [{module: builtin, only: [list_dir]}]
%[3]s
`

func stallingURL(srv *httptest.Server, protocol string) string {
	if protocol == "openai" {
		return srv.URL + "/v1"
	}
	return srv.URL
}

var stalls = map[string]int32{"hang": hanging, "trickle": trickling}

// Regression: max_time ended a model request only once the run had
// committed a round, so the first request of a run (or of a resume) that
// hung, or that streamed one byte after another forever, held an agent
// with max_time: 1s for as long as the server kept it. It is ended, and
// the run pauses at its boundary naming max_time and how to raise it, on
// each resume too; a resume with a raised --max-time goes on.
func TestMaxTimeEndsAFirstRoundsModelRequestThatStalls(t *testing.T) {
	for _, protocol := range []string{"openai", "anthropic"} {
		for how, mode := range stalls {
			t.Run(protocol+"/"+how, func(t *testing.T) {
				srv, stall := stallingModel(t, protocol, 1)
				stall.Store(mode)
				eng, store := fileEngine(t)
				af := agentIn(t, fmt.Sprintf(stallingAgent, protocol, stallingURL(srv, protocol), "limits: {max_time: 1s}"), "")
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard for a hang
				defer cancel()
				res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "stalled", Prompt: "look"})
				if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "max_time") ||
					!strings.Contains(res.Reason, "--max-time") || res.Rounds != 0 {
					t.Fatalf("run: %+v, %v; want paused by max_time before round 1, saying to resume with --max-time", res, err)
				}
				res, err = eng.Resume(ctx, ResumeOptions{ID: "stalled"})
				if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "max_time") || res.Rounds != 0 {
					t.Fatalf("resume: %+v, %v; want paused by max_time again", res, err)
				}
				stall.Store(answering)
				res, err = eng.Resume(ctx, ResumeOptions{ID: "stalled", Limits: RunLimits{MaxTime: Duration(time.Hour)}})
				if err != nil || res.Status != StatusDone || res.Text != "done" || res.Rounds != 2 {
					t.Fatalf("resume with --max-time: %+v, %v; want done after 2 rounds", res, err)
				}
				rec, err := store.Read("stalled")
				must(t, err)
				if rec.State.ToolCalls != 1 {
					t.Fatalf("%d tool calls; want the one list_dir", rec.State.ToolCalls)
				}
			})
		}
	}
}

// A request of a later round that streams one byte after another forever
// is ended by max_time as one that hangs is: the run pauses at its
// boundary, its committed round kept, and a resume with a raised
// --max-time goes on from it, the round's call not made again.
func TestMaxTimeEndsALaterRoundsModelRequestThatTrickles(t *testing.T) {
	for _, protocol := range []string{"openai", "anthropic"} {
		t.Run(protocol, func(t *testing.T) {
			srv, stall := stallingModel(t, protocol, 2)
			stall.Store(trickling)
			eng, store := fileEngine(t)
			af := agentIn(t, fmt.Sprintf(stallingAgent, protocol, stallingURL(srv, protocol), "limits: {max_time: 1s}"), "")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard for a hang
			defer cancel()
			res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "stalled", Prompt: "look"})
			if err != nil || res.Status != StatusPaused || !strings.Contains(res.Reason, "max_time") || res.Rounds != 1 {
				t.Fatalf("run: %+v, %v; want paused by max_time after round 1", res, err)
			}
			stall.Store(answering)
			res, err = eng.Resume(ctx, ResumeOptions{ID: "stalled", Limits: RunLimits{MaxTime: Duration(time.Hour)}})
			if err != nil || res.Status != StatusDone || res.Text != "done" || res.Rounds != 2 {
				t.Fatalf("resume with --max-time: %+v, %v; want done after 2 rounds", res, err)
			}
			rec, err := store.Read("stalled")
			must(t, err)
			if rec.State.ToolCalls != 1 || rec.State.Status != checkpoint.StatusDone {
				t.Fatalf("%s with %d tool calls; want done, the one list_dir made once", rec.State.Status, rec.State.ToolCalls)
			}
		})
	}
}

// stalledTree is a lead with max_time 1s that delegates to its sub-agent
// leaf, whose model is the stallingModel at %s.
const stalledTree = `name: lead
model: {provider: script, script: script.yaml}
workspace: workspace
tools: [{module: builtin}]
limits: {max_time: 1s}
agents:
  - name: leaf
    description: lists the workspace
    model: {provider: openai, name: test-model, base_url: %s/v1, max_retries: -1}
    tools: [{module: builtin, only: [list_dir]}]
`

// Regression: a tree's max_time ended a sub-agent's model request only
// once a round of the tree had committed, so a sub-agent whose first
// request hung, before any round of the tree committed, held the whole
// tree past its max_time for as long as the server kept it. The request is
// ended, the tree pauses naming its max_time and the lead's resume, and
// that resume with a raised --max-time finishes it.
func TestTreeMaxTimeEndsASubAgentsFirstModelRequestThatHangs(t *testing.T) {
	srv, stall := stallingModel(t, "openai", 1)
	stall.Store(hanging)
	eng, store := fileEngine(t)
	af := agentIn(t, fmt.Sprintf(stalledTree, srv.URL), "turns:\n  - tool_calls: [{name: delegate, input: {agent: leaf, task: list it}}]\n  - text: lead done\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard for a hang
	defer cancel()
	res, err := eng.Run(ctx, RunOptions{Agent: af, ID: "lead", Prompt: "go"})
	must(t, err)
	if res.Status != StatusPaused || !strings.Contains(res.Reason, "the tree of lead reached max_time") || !strings.Contains(res.Reason, "resume lead with --max-time") {
		t.Fatalf("lead: %+v; want paused by the tree's max_time, saying to resume lead with --max-time", res)
	}
	leaf := childID("lead", "leaf", "call_1_0")
	l, err := store.Read(leaf)
	must(t, err)
	if l.State.Status != checkpoint.StatusPaused || l.State.Round != 0 {
		t.Fatalf("leaf: %s at round %d; want paused before its first round", l.State.Status, l.State.Round)
	}
	stall.Store(answering)
	res, err = eng.Resume(ctx, ResumeOptions{ID: "lead", Limits: RunLimits{MaxTime: Duration(time.Hour)}})
	if err != nil || res.Status != StatusDone || res.Text != "lead done" {
		t.Fatalf("resume of lead with --max-time: %+v, %v", res, err)
	}
}
